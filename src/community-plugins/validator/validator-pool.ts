import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { availableParallelism } from 'node:os';
import { WorkerPool, WorkerPoolError, moduleWorkerSource } from '../../common/worker-pool';
import { Rule } from './rules';
import type { ValidationResult } from './types';

/** Above the validator's own 3 s budget, so only a stuck or runaway thread reaches it. */
export const VALIDATION_TIMEOUT_MS = 5_000;
/**
 * For a thread to load the validator and its grammar: about 0.1 s built, about 1 s under Jest,
 * which transpiles the TypeScript sources in each thread. Only a broken install reaches it.
 */
export const VALIDATOR_STARTUP_TIMEOUT_MS = 20_000;
/** Uploads waiting for a thread; each holds its file in memory. */
export const MAX_QUEUED_VALIDATIONS = 8;

export interface ValidatorPoolOptions {
  size?: number;
  maxQueued?: number;
  timeoutMs?: number;
  startupTimeoutMs?: number;
}

/**
 * Runs validate() on worker threads. Parsing and the rules are synchronous: tens of ms for an
 * ordinary plugin, up to the 3 s budget for a crafted one, and on the event loop that would
 * stall every request of the API. Uploads are rare, so at most two threads, started on the first
 * uploads and then kept. Like validate() itself it never throws: a thread that crashes or
 * overruns, a full queue or a closed pool reject the plugin with an `internal-error` violation.
 */
export class ValidatorPool implements OnApplicationShutdown {
  private readonly logger = new Logger('ValidatorPool');
  private readonly pool: WorkerPool<Buffer, ValidationResult>;

  constructor(options: ValidatorPoolOptions = {}) {
    this.pool = new WorkerPool({
      name: 'validator',
      source: moduleWorkerSource(require.resolve('./validation-worker')),
      size: options.size ?? Math.min(2, availableParallelism()),
      maxQueued: options.maxQueued ?? MAX_QUEUED_VALIDATIONS,
      timeoutMs: options.timeoutMs ?? VALIDATION_TIMEOUT_MS,
      startupTimeoutMs: options.startupTimeoutMs ?? VALIDATOR_STARTUP_TIMEOUT_MS,
    });
  }

  async validate(source: Buffer): Promise<ValidationResult> {
    try {
      return await this.pool.run(source);
    } catch (error) {
      this.logger.warn(
        `Plugin rejected without a verdict: ${error instanceof Error ? error.message : String(error)}`,
      );
      const busy = error instanceof WorkerPoolError && error.reason === 'busy';
      return {
        ok: false,
        violations: [
          {
            rule: Rule.internalError,
            message: busy
              ? 'Validator is busy; plugin rejected, try again later'
              : 'Validator failed internally; plugin rejected',
            line: 1,
            column: 1,
          },
        ],
      };
    }
  }

  /** After the HTTP server has closed (Nest runs module-destroy hooks before that), so uploads in flight finish. */
  onApplicationShutdown(): Promise<void> {
    return this.pool.close();
  }
}
