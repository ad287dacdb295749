import type { QueueLoad, WaitObserver } from '../metrics/metrics';

/**
 * At most `concurrency` test-runs at a time (one per core: a run is a CPU-bound process), and
 * at most `maxWaiting` admitted runs waiting for one. `admit` decides at once, so a request is
 * answered 202 or 503 before anything is written.
 */
export class TestRunQueue {
  private admitted = 0;
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly maxWaiting: number,
    /** Told how long each run waited for a core (the app's metrics). */
    private readonly waited: WaitObserver = () => undefined,
  ) {}

  /** Admitted runs waiting for a core, and runs running. */
  get load(): QueueLoad {
    return { waiting: this.waiting.length, running: this.running };
  }

  /** A place for one run; false when every core is busy and `maxWaiting` runs wait already. */
  admit(): boolean {
    if (this.admitted >= this.concurrency + this.maxWaiting) return false;
    this.admitted += 1;
    return true;
  }

  /** Gives back the place of an admitted run that will not run. */
  release(): void {
    this.admitted -= 1;
  }

  /** Runs an admitted job when a core is free, first come first served. */
  async run<T>(job: () => Promise<T>): Promise<T> {
    const since = performance.now();
    if (this.running >= this.concurrency || this.waiting.length > 0) {
      // The slot is handed over by the run that ends, never taken by a later arrival.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    this.waited((performance.now() - since) / 1000);
    try {
      return await job();
    } finally {
      this.admitted -= 1;
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
