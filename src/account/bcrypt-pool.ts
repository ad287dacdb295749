import { availableParallelism } from 'node:os';
import Piscina from 'piscina';
import { eventLoopLoad } from '../common/event-loop-load';
import type { BcryptJob } from './bcrypt-worker';

/**
 * Linux keeps a nice value per thread: a hashing thread at nice 10 gives the CPU up to the
 * event loop (and the database) whenever they want it, and still gets every cycle they
 * leave.
 */
const NICE_INCREMENT = 10;

/**
 * bcrypt is pure CPU for tens to hundreds of milliseconds; run on the event loop it would
 * stall every other request during a burst of logins. Threads start on the first logins and
 * are kept; jobs beyond them wait in a queue, first in, first out.
 *
 * While the event loop is busy with other requests, one thread fewer hashes at a time (never
 * fewer than one): the nice value shares the cores, but each hashing thread still holds a core
 * for a few milliseconds before the scheduler hands it back, and the requests beside it wait
 * that long (`npm run bench`, 2 cores: GET p99 beside 20 logins/s 1.4 to 1.6x its idle value
 * with two threads, 1.2x with one). Logins alone still get every core. See
 * docs/decisions/bcrypt-threads.md.
 */
export class BcryptPool {
  private readonly threads: Piscina<BcryptJob, string | boolean>;
  private readonly waiting: (() => void)[] = [];
  private readonly taken = new Set<Promise<unknown>>();
  private running = 0;
  private closed = false;

  constructor(
    private readonly size = Math.max(1, Math.min(4, availableParallelism())),
    private readonly loopBusy: () => boolean = eventLoopLoad(),
  ) {
    this.threads = new Piscina({
      // The compiled worker beside this module; under Jest, the built one (see jest.config.js).
      filename: require.resolve('./bcrypt-worker'),
      minThreads: 0,
      maxThreads: size,
      idleTimeout: Infinity,
      niceIncrement: NICE_INCREMENT,
    });
  }

  /** Jobs hashing now (the rest wait). */
  get hashing(): number {
    return this.running;
  }

  hash(password: string, cost: number): Promise<string> {
    return this.run({ op: 'hash', password, cost }) as Promise<string>;
  }

  compare(password: string, hash: string): Promise<boolean> {
    return this.run({ op: 'verify', password, hash }) as Promise<boolean>;
  }

  /** Jobs already taken, hashing or waiting, finish first. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.taken);
    return this.threads.close();
  }

  private run(job: BcryptJob): Promise<string | boolean> {
    if (this.closed) return Promise.reject(new Error('bcrypt pool closed'));
    const result = new Promise<string | boolean>((resolve, reject) => {
      this.waiting.push(() => {
        void this.threads
          .run(job)
          .then(resolve, reject)
          .finally(() => {
            this.running -= 1;
            this.dispatch();
          });
      });
      this.dispatch();
    });
    this.taken.add(result);
    const forget = () => void this.taken.delete(result);
    result.then(forget, forget);
    return result;
  }

  private dispatch(): void {
    if (this.waiting.length === 0) return;
    const limit = this.loopBusy() ? Math.max(1, this.size - 1) : this.size;
    while (this.running < limit && this.waiting.length > 0) {
      this.running += 1;
      this.waiting.shift()!();
    }
  }
}
