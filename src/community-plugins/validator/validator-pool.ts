import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { availableParallelism } from 'node:os';
import Piscina from 'piscina';
import { FairQueue, QueueRefusedError } from '../../common/fair-queue';
import { Rule } from './rules';
import type { ValidationResult } from './types';

/**
 * Above the validator's own 3 s budget, so only a stuck or runaway thread reaches it. It also
 * covers a new thread's start (loading the grammar, about 0.1 s) for the first uploads.
 */
export const VALIDATION_TIMEOUT_MS = 5_000;
/**
 * Uploads waiting for a thread; each holds its file in memory (at most 32 x 256 KB). Sized so
 * that ten uploaders sending at once, or one sending ten, are queued and never turned away.
 */
export const MAX_QUEUED_VALIDATIONS = 32;
/** Uploads one uploader may have waiting: the rest of the queue stays open to others. */
export const MAX_QUEUED_VALIDATIONS_PER_UPLOADER = 10;
/**
 * Linux keeps a nice value per thread: a validation thread at nice 10 gives the CPU up to the
 * event loop whenever it wants it, and still gets every cycle the event loop leaves.
 */
export const WORKER_NICE_INCREMENT = 10;

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
}

/**
 * Runs validate() on worker threads (piscina). Parsing and the rules are synchronous: tens of
 * ms for an ordinary plugin, up to the 3 s budget for a crafted one, and on the event loop
 * that would stall every request of the API. Uploads are rare, so at most two threads,
 * started on the first uploads and then kept. Uploaders are served in turn (FairQueue). A
 * thread that crashes or overruns rejects the plugin with an `internal-error` violation (fail
 * closed); a full queue or a closed pool throw ValidatorBusyError.
 */
export class ValidatorPool implements OnApplicationShutdown {
  private readonly logger = new Logger('ValidatorPool');
  private readonly threads: Piscina<Uint8Array, ValidationResult>;
  private readonly queue: FairQueue;
  private readonly timeoutMs: number;

  constructor(options: ValidatorPoolOptions = {}) {
    const size = options.size ?? Math.min(2, availableParallelism());
    this.timeoutMs = options.timeoutMs ?? VALIDATION_TIMEOUT_MS;
    this.threads = new Piscina({
      // The compiled worker beside this module; under Jest, the built one (see jest.config.js).
      filename: require.resolve('./validation-worker'),
      minThreads: 0,
      maxThreads: size,
      idleTimeout: Infinity,
      niceIncrement: WORKER_NICE_INCREMENT,
    });
    // A thread lost while it had no upload: its replacement starts with the next upload.
    this.threads.on('error', (error: unknown) =>
      this.logger.warn(`Validator thread failed: ${String(error)}`),
    );
    this.queue = new FairQueue({
      name: 'validator',
      concurrency: size,
      maxQueued: options.maxQueued ?? MAX_QUEUED_VALIDATIONS,
      maxQueuedPerOwner: options.maxQueuedPerUploader ?? MAX_QUEUED_VALIDATIONS_PER_UPLOADER,
    });
  }

  async validate(source: Buffer, uploader = ''): Promise<ValidationResult> {
    try {
      // The signal is made when a thread is free for the job, so waiting is not its time;
      // aborting a running task terminates its thread.
      return await this.queue.run(uploader, () =>
        this.threads.run(source, { signal: AbortSignal.timeout(this.timeoutMs) }),
      );
    } catch (error) {
      if (error instanceof QueueRefusedError) throw new ValidatorBusyError(error.message);
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

  /**
   * After the HTTP server has closed (Nest runs module-destroy hooks before that), so uploads in
   * flight finish. Waiting uploads are refused; a running one ends within its timeout.
   */
  async onApplicationShutdown(): Promise<void> {
    this.queue.close();
    await this.threads.close();
  }
}
