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
/** Uploads one uploader may have waiting: the rest of the queue stays open to others. */
export const MAX_QUEUED_VALIDATIONS_PER_UPLOADER = 2;

/**
 * No thread could take the upload now (queue full, or shutting down): nothing was judged,
 * so this is no verdict on the code, and the client may try again.
 */
export class ValidatorBusyError extends Error {}

export interface ValidatorPoolOptions {
  size?: number;
  maxQueued?: number;
  maxQueuedPerUploader?: number;
  timeoutMs?: number;
  startupTimeoutMs?: number;
}

/**
 * Runs validate() on worker threads. Parsing and the rules are synchronous: tens of ms for an
 * ordinary plugin, up to the 3 s budget for a crafted one, and on the event loop that would
 * stall every request of the API. Uploads are rare, so at most two threads, started on the first
 * uploads and then kept. Uploaders are served in turn. A thread that crashes or overruns
 * rejects the plugin with an `internal-error` violation (fail closed); a full queue or a
 * closed pool throw ValidatorBusyError.
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
      maxQueuedPerOwner: options.maxQueuedPerUploader ?? MAX_QUEUED_VALIDATIONS_PER_UPLOADER,
      timeoutMs: options.timeoutMs ?? VALIDATION_TIMEOUT_MS,
      startupTimeoutMs: options.startupTimeoutMs ?? VALIDATOR_STARTUP_TIMEOUT_MS,
    });
  }

  async validate(source: Buffer, uploader = ''): Promise<ValidationResult> {
    try {
      return await this.pool.run(source, uploader);
    } catch (error) {
      if (error instanceof WorkerPoolError && (error.reason === 'busy' || error.reason === 'closed')) {
        throw new ValidatorBusyError(error.message);
      }
      this.logger.warn(
        `Plugin rejected without a verdict: ${error instanceof Error ? error.message : String(error)}`,
      );
      return {
        ok: false,
        violations: [
          {
            rule: Rule.internalError,
            message: 'Validator failed internally; plugin rejected',
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
