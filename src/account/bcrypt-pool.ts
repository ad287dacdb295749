import { availableParallelism } from 'node:os';
import Piscina from 'piscina';
import type { BcryptJob } from './bcrypt-worker';

/**
 * Linux keeps a nice value per thread: a hashing thread at nice 10 gives the CPU up to the
 * event loop (and the database) whenever they want it, and still gets every cycle they
 * leave. With as many threads as cores, a burst of logins would otherwise take the cores from
 * the requests around it (`npm run bench`, 2 cores: GET p99 2.2-2.5x its idle value with
 * 20 logins/s beside it; 1.2x with this).
 */
const NICE_INCREMENT = 10;

/**
 * bcrypt is pure CPU for tens to hundreds of milliseconds; run on the event loop it would
 * stall every other request during a burst of logins. Threads start on the first logins and
 * are kept; jobs beyond them wait in piscina's queue, first in, first out.
 */
export class BcryptPool {
  private readonly threads: Piscina<BcryptJob, string | boolean>;
  private closed = false;

  constructor(size = Math.max(1, Math.min(4, availableParallelism()))) {
    this.threads = new Piscina({
      // The compiled worker beside this module; under Jest, the built one (see jest.config.js).
      filename: require.resolve('./bcrypt-worker'),
      minThreads: 0,
      maxThreads: size,
      idleTimeout: Infinity,
      niceIncrement: NICE_INCREMENT,
    });
  }

  hash(password: string, cost: number): Promise<string> {
    return this.run({ op: 'hash', password, cost }) as Promise<string>;
  }

  compare(password: string, hash: string): Promise<boolean> {
    return this.run({ op: 'verify', password, hash }) as Promise<boolean>;
  }

  /** Jobs already running finish first. */
  close(): Promise<void> {
    this.closed = true;
    return this.threads.close();
  }

  private run(job: BcryptJob): Promise<string | boolean> {
    if (this.closed) return Promise.reject(new Error('bcrypt pool closed'));
    return this.threads.run(job);
  }
}
