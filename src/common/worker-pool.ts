import { Worker } from 'node:worker_threads';

/** What a pool worker posts back for each job it is sent: exactly one reply per job. */
export type WorkerReply<R> = { ok: true; result: R } | { ok: false; message: string };

/** Posted once by a worker of a pool with `startupTimeoutMs`, when it has loaded and can take jobs. */
export const WORKER_READY = { ready: true } as const;

/** The pool's own refusals and losses, as opposed to an error a job reported itself. */
export type WorkerPoolFailure = 'closed' | 'busy' | 'timeout' | 'crashed';

export class WorkerPoolError extends Error {
  constructor(
    readonly reason: WorkerPoolFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface WorkerPoolOptions {
  /** Names the pool in its errors: `<name> pool closed`. */
  name: string;
  /** CommonJS source run with `eval: true`; it answers every message with one `WorkerReply`. */
  source: string;
  /** Workers are started on demand, up to this many, and then kept. */
  size: number;
  /** Jobs that may wait for a worker; beyond that `run` rejects at once. Unbounded by default. */
  maxQueued?: number;
  /**
   * Jobs one owner (see `run`) may have waiting. Owners are served in turn, one job each, so
   * one owner's flood neither fills the queue nor delays another's job behind it.
   */
  maxQueuedPerOwner?: number;
  /** A job running longer than this takes its worker down with it. No limit by default. */
  timeoutMs?: number;
  /**
   * When set, the worker posts `WORKER_READY` once it has loaded, before it starts on any job
   * (it attaches its message listener after that; jobs sent meanwhile wait in its port), and a
   * job's `timeoutMs` runs from then: loading is not the job's fault, and may be slow (see
   * `moduleWorkerSource`). A worker not ready within this time fails like a job that overruns.
   * Without it, a fresh worker's loading counts as its first job's time.
   */
  startupTimeoutMs?: number;
}

interface Pending<J, R> {
  job: J;
  resolve: (value: R) => void;
  reject: (error: Error) => void;
}

interface Running<J, R> {
  pending: Pending<J, R>;
  timer?: NodeJS.Timeout;
}

/**
 * Runs CPU-bound jobs on worker threads so the event loop keeps serving requests. Each worker
 * runs one job at a time. A worker that crashes, exits or overruns its time is terminated and
 * fails only its own job; the next job that needs a worker starts a fresh one.
 */
export class WorkerPool<J, R> {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Running<J, R>>();
  /** Waiting jobs by owner; the map's order is the turn order. */
  private readonly queues = new Map<string, Pending<J, R>[]>();
  private queued = 0;
  private readonly loading = new Set<Worker>();
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions) {}

  run(job: J, owner = ''): Promise<R> {
    if (this.closed) return Promise.reject(this.closedError());
    return new Promise<R>((resolve, reject) => {
      const mine = this.queues.get(owner) ?? [];
      mine.push({ job, resolve, reject });
      this.queues.set(owner, mine);
      this.queued += 1;
      this.dispatch();
      // The queues were within bounds before this job, so only this job (the last of its
      // owner's, if it still waits) can be the one too many.
      const { maxQueued = Infinity, maxQueuedPerOwner = Infinity } = this.options;
      const waiting = this.queues.get(owner);
      if (waiting && (this.queued > maxQueued || waiting.length > maxQueuedPerOwner)) {
        waiting.pop()!.reject(new WorkerPoolError('busy', `${this.options.name} pool queue is full`));
        this.queued -= 1;
        if (waiting.length === 0) this.queues.delete(owner);
      }
    });
  }

  /** The first job of the owner whose turn it is; that owner then goes to the back. */
  private nextJob(): Pending<J, R> | undefined {
    for (const [owner, waiting] of this.queues) {
      const pending = waiting.shift()!;
      this.queues.delete(owner);
      if (waiting.length > 0) this.queues.set(owner, waiting);
      this.queued -= 1;
      return pending;
    }
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.idle, ...this.busy.keys()];
    const error = this.closedError();
    for (const running of this.busy.values()) {
      clearTimeout(running.timer);
      running.pending.reject(error);
    }
    for (const waiting of this.queues.values()) for (const pending of waiting) pending.reject(error);
    this.idle.length = 0;
    this.busy.clear();
    this.queues.clear();
    this.queued = 0;
    this.loading.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private dispatch(): void {
    while (this.queued > 0) {
      const worker =
        this.idle.pop() ?? (this.idle.length + this.busy.size < this.options.size ? this.spawn() : undefined);
      if (!worker) return;
      const pending = this.nextJob()!;
      this.busy.set(worker, { pending, timer: this.startTimer(worker) });
      worker.postMessage(pending.job);
    }
  }

  private startTimer(worker: Worker): NodeJS.Timeout | undefined {
    const { name, timeoutMs, startupTimeoutMs } = this.options;
    if (this.loading.has(worker)) {
      return setTimeout(() => {
        const message = `${name} worker took longer than ${startupTimeoutMs} ms to start`;
        this.retire(worker, new WorkerPoolError('timeout', message));
      }, startupTimeoutMs);
    }
    if (timeoutMs === undefined) return undefined;
    return setTimeout(() => {
      this.retire(worker, new WorkerPoolError('timeout', `${name} job took longer than ${timeoutMs} ms`));
    }, timeoutMs);
  }

  private spawn(): Worker {
    const worker = new Worker(this.options.source, { eval: true });
    if (this.options.startupTimeoutMs !== undefined) this.loading.add(worker);
    worker.on('message', (reply: WorkerReply<R> | typeof WORKER_READY) => {
      const running = this.busy.get(worker);
      if ('ready' in reply) {
        this.loading.delete(worker);
        if (running) {
          clearTimeout(running.timer);
          running.timer = this.startTimer(worker);
        }
        return;
      }
      // A late answer from a worker already given up on, or from a closed pool.
      if (!running) return;
      clearTimeout(running.timer);
      this.loading.delete(worker);
      this.busy.delete(worker);
      this.idle.push(worker);
      if (reply.ok) running.pending.resolve(reply.result);
      else running.pending.reject(new Error(reply.message));
      this.dispatch();
    });
    worker.on('error', (error) => {
      // Usually an Error (from another realm under Jest, so no instanceof), but a worker may throw anything.
      const message = `${this.options.name} worker failed: ${String(error?.message ?? error)}`;
      this.retire(worker, new WorkerPoolError('crashed', message, { cause: error }));
    });
    worker.on('exit', (code) => {
      this.retire(
        worker,
        new WorkerPoolError('crashed', `${this.options.name} worker exited with code ${code}`),
      );
    });
    return worker;
  }

  /** Takes a worker out of the pool for good, failing the job it had. Later calls for it do nothing. */
  private retire(worker: Worker, error: WorkerPoolError): void {
    const running = this.busy.get(worker);
    const idleIndex = this.idle.indexOf(worker);
    if (!running && idleIndex < 0) return;
    this.busy.delete(worker);
    this.loading.delete(worker);
    if (idleIndex >= 0) this.idle.splice(idleIndex, 1);
    if (running) {
      clearTimeout(running.timer);
      running.pending.reject(error);
    }
    // Stops a worker stuck in a loop; after a crash it has already stopped.
    void worker.terminate();
    this.dispatch();
  }

  private closedError(): WorkerPoolError {
    return new WorkerPoolError('closed', `${this.options.name} pool closed`);
  }
}

/**
 * Source for a pool worker whose code is a module of this project, given its resolved path.
 * Built (`node dist/src/main.js`) that path is the compiled `.js`, which a worker loads as it is.
 * Under Jest it is the `.ts` source: ts-jest compiles in the parent's module loader only, and a
 * worker thread has its own. For that case alone the worker first registers a per-file
 * TypeScript transpiler, as test/helpers/ts-register.js does for `node -r`. `typescript` is a
 * devDependency: present wherever `.ts` sources run, and never required by a built server.
 * (A `-r` of that helper in `execArgv` would make src depend on test files.)
 */
export function moduleWorkerSource(modulePath: string): string {
  const register = modulePath.endsWith('.ts') ? typescriptRegisterSource() : '';
  return `${register}require(${JSON.stringify(modulePath)});\n`;
}

function typescriptRegisterSource(): string {
  // The project compiles per file (isolatedModules), so a per-file transpile emits what tsc does.
  const compilerOptions = {
    module: 'CommonJS',
    target: 'ES2023',
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    inlineSourceMap: true,
  };
  return `
const { readFileSync } = require('node:fs');
const ts = require(${JSON.stringify(require.resolve('typescript'))});
const { options } = ts.convertCompilerOptionsFromJson(${JSON.stringify(compilerOptions)}, '');
require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), { compilerOptions: options, fileName: filename });
  module._compile(outputText, filename);
};
`;
}
