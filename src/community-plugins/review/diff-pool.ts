import Piscina from 'piscina';
import { FairQueue, QueueRefusedError } from '../../common/fair-queue';
import type { DiffJob } from './diff-worker';
import type { DiffHunks } from './unified-diff';
import type { QueueLoad, WaitObserver } from '../../metrics/metrics';

/** As the bcrypt threads (src/account/bcrypt-pool.ts): the event loop gets the CPU first. */
const NICE_INCREMENT = 10;

/** No thread could take the diff now (queue full, or shutting down); the reader may try again. */
export class DiffBusyError extends Error {}

export interface DiffPoolOptions {
  threads: number;
  /** Diffs that may wait for a thread; beyond that they are refused with DiffBusyError. */
  maxQueued: number;
  /** Told how long each diff waited for a thread (the app's metrics). */
  waited?: WaitObserver;
}

/**
 * A diff of two 20,000-line files is up to 0.4 s of CPU (its work budget): on the event loop it held
 * every other request for that long, eight at once for seconds. Here it runs in threads,
 * started on the first diff and then kept; readers are served in turn (FairQueue), which also
 * bounds the waiting (each waiting diff holds both texts).
 */
export class DiffPool {
  private readonly threads: Piscina<DiffJob, DiffHunks>;
  private readonly queue: FairQueue;

  constructor(options: DiffPoolOptions) {
    this.threads = new Piscina({
      // The compiled worker beside this module; under Jest, the built one (see jest.config.js).
      filename: require.resolve('./diff-worker'),
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: Infinity,
      niceIncrement: NICE_INCREMENT,
    });
    this.queue = new FairQueue({
      name: 'diff',
      concurrency: options.threads,
      maxQueued: options.maxQueued,
      maxQueuedPerOwner: options.maxQueued,
      waited: options.waited,
    });
  }

  /** Diffs waiting for a thread, and being computed. */
  get load(): QueueLoad {
    return this.queue.load;
  }

  async diff(reader: string, before: string, after: string): Promise<DiffHunks> {
    try {
      return await this.queue.run(reader, () => this.threads.run({ before, after }));
    } catch (error) {
      if (error instanceof QueueRefusedError) throw new DiffBusyError(error.message);
      throw error;
    }
  }

  /** After the HTTP server has closed: waiting diffs are refused, running ones finish. */
  async onApplicationShutdown(): Promise<void> {
    this.queue.close();
    await this.threads.close();
  }
}
