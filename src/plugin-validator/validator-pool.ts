import { FairQueue, QueueRefusedError } from '../common/fair-queue';
import { PythonWorker } from './python-worker';
import { Rule } from './rules';
import type { ValidationResult, Violation } from './types';
import type { QueueLoad, WaitObserver } from '../metrics/metrics';

/**
 * Wall time, a backstop for a stuck worker: the analyser's CPU budget (below) bounds the work.
 * On a busy machine wall time runs far past CPU time (a 240 KB plugin of 1.5 s CPU took over 5 s
 * with both test suites running), and an ordinary upload must not be refused for the load.
 */
export const VALIDATION_TIMEOUT_MS = 20_000;
/**
 * The analyser's own CPU-time budget for one plugin (python/analysis/budget.py refuses it past this with
 * `analysis-too-slow` and stays free for the next upload). Its worst cases run well under 1 s at
 * the upload limit; twice that leaves room for a slower machine, and it is far below
 * VALIDATION_TIMEOUT_MS, so the worker answers before the pool would have to kill it.
 */
export const ANALYSIS_BUDGET_MS = 2_000;
/**
 * Uploads waiting for a worker; each holds its file in memory (at most 32 x 256 KB). Sized so
 * that ten uploaders sending at once, or one sending ten, are queued and never turned away.
 */
export const MAX_QUEUED_VALIDATIONS = 32;
/**
 * A new worker's start (python3, the tables) is not counted in a plugin's time: the first upload
 * after a restart on a busy machine would fail otherwise. A start that hangs still ends here.
 */
export const WORKER_START_TIMEOUT_MS = 30_000;
/** Uploads one uploader may have waiting: the rest of the queue stays open to others. */
export const MAX_QUEUED_VALIDATIONS_PER_UPLOADER = 10;

/**
 * No worker could take the upload now (queue full, or shutting down): nothing was judged,
 * so this is no verdict on the code, and the client may try again.
 */
export class ValidatorBusyError extends Error {}

export interface ValidatorPoolOptions {
  size?: number;
  maxQueued?: number;
  maxQueuedPerUploader?: number;
  timeoutMs?: number;
  /** The analyser's CPU budget per plugin (ANALYSIS_BUDGET_MS). */
  budgetMs?: number;
  python?: string;
  /** Where a rejection without a verdict is reported (the app passes its logger). */
  warn?: (message: string) => void;
  /** Told how long each upload waited for a worker (the app's metrics). */
  waited?: WaitObserver;
}

const INTERNAL_ERROR: Violation = {
  rule: Rule.internalError,
  message: 'Validator failed internally; plugin rejected',
  line: 1,
  column: 1,
};

/** The worker overran the pool's timeout: a refusal for time, said as such (the worker is replaced). */
const TOO_SLOW: Violation = {
  rule: Rule.analysisTooSlow,
  message: 'The analysis took longer than its time limit; plugin rejected',
  line: 1,
  column: 1,
};

/** The pool's own deadline passed: the request's time, not a fault of the analyser. */
class AnalysisTimeoutError extends Error {}

/**
 * Runs the analyser in long-lived python3 processes (python-worker.ts). Uploads are rare, so at
 * most two workers, started on the first uploads and then kept. Uploaders are served in turn
 * (FairQueue). The analyser refuses a plugin past its CPU budget itself (`analysis-too-slow`); a
 * worker that still overruns the pool's timeout is killed and replaced and the plugin refused with
 * `analysis-too-slow`; one that crashes, with `internal-error` (fail closed); a full queue or a closed pool
 * throw ValidatorBusyError.
 */
export class ValidatorPool {
  private readonly warn: (message: string) => void;
  private readonly running = new Set<Promise<unknown>>();
  private readonly idle: PythonWorker[] = [];
  private readonly busy = new Set<PythonWorker>();
  private readonly queue: FairQueue;
  private readonly timeoutMs: number;
  private readonly budgetMs: number;
  private readonly python: string;

  constructor(options: ValidatorPoolOptions = {}) {
    const size = options.size ?? 2;
    this.timeoutMs = options.timeoutMs ?? VALIDATION_TIMEOUT_MS;
    this.budgetMs = options.budgetMs ?? ANALYSIS_BUDGET_MS;
    this.python = options.python ?? 'python3';
    this.warn = options.warn ?? (() => undefined);
    this.queue = new FairQueue({
      name: 'validator',
      concurrency: size,
      maxQueued: options.maxQueued ?? MAX_QUEUED_VALIDATIONS,
      maxQueuedPerOwner: options.maxQueuedPerUploader ?? MAX_QUEUED_VALIDATIONS_PER_UPLOADER,
      waited: options.waited,
    });
  }

  /** Uploads waiting for a worker, and being analysed. */
  get load(): QueueLoad {
    return this.queue.load;
  }

  async validate(source: Buffer, uploader = ''): Promise<ValidationResult> {
    try {
      const answer = await this.run(uploader, {
        source: source.toString('base64'),
        budget_ms: this.budgetMs,
      });
      const violations = answer.violations;
      if (!Array.isArray(violations)) throw new Error('analyser answered without violations');
      const result: ValidationResult = { ok: violations.length === 0, violations: violations as Violation[] };
      if (Array.isArray(answer.warnings)) result.warnings = answer.warnings as Violation[];
      return result;
    } catch (error) {
      if (error instanceof QueueRefusedError) throw new ValidatorBusyError(error.message);
      if (error instanceof AnalysisTimeoutError) {
        this.warn(`Plugin rejected for time: ${error.message}`);
        return { ok: false, violations: [TOO_SLOW] };
      }
      this.warn(
        `Plugin rejected without a verdict: ${error instanceof Error ? error.message : String(error)}`,
      );
      return { ok: false, violations: [INTERNAL_ERROR] };
    }
  }

  /** The analyser's view of each source (statements, scopes, bindings), for the differential test. */
  async views(sources: Buffer[]): Promise<unknown[]> {
    const answer = await this.run('', { view: sources.map((source) => source.toString('base64')) });
    return answer.views as unknown[];
  }

  /** One request on a free worker, timed from when a worker takes it (waiting is not its time). */
  private run(uploader: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.queue.run(uploader, () => {
      const job = this.runOnWorker(body);
      this.running.add(job);
      void job.catch(() => undefined).finally(() => this.running.delete(job));
      return job;
    });
  }

  private async runOnWorker(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    {
      const worker = this.idle.pop() ?? new PythonWorker(this.python);
      this.busy.add(worker);
      let timer: NodeJS.Timeout | undefined;
      const deadline = (ms: number, what: string, fault: new (message: string) => Error) =>
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new fault(`${what} took longer than ${ms} ms`)), ms);
        });
      try {
        // A start that hangs is the machine's fault, not the plugin's: internal-error.
        await Promise.race([worker.started(), deadline(WORKER_START_TIMEOUT_MS, 'analyser start', Error)]);
        clearTimeout(timer);
        const answer = await Promise.race([
          worker.request(body),
          deadline(this.timeoutMs, 'analyser', AnalysisTimeoutError),
        ]);
        this.idle.push(worker);
        return answer;
      } catch (error) {
        // Overrun, crash or garbage: this worker is not trusted with another plugin.
        worker.kill();
        throw error;
      } finally {
        clearTimeout(timer);
        this.busy.delete(worker);
      }
    }
  }

  /**
   * After the HTTP server has closed, so uploads in flight finish. Waiting uploads are refused;
   * a running one ends within its timeout.
   */
  async onApplicationShutdown(): Promise<void> {
    this.queue.close();
    await Promise.allSettled([...this.running]);
    await Promise.all(this.idle.splice(0).map((worker) => worker.close()));
  }
}
