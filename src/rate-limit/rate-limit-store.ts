/**
 * Counters with a fixed window, shared by every check that bounds attempts (account
 * endpoints, uploads). In the process by default; in Redis when REDIS_URL is set, so every
 * replica sees the same counts.
 */
export interface WindowCount {
  /** Hits in the current window, this one included. */
  count: number;
  /** Milliseconds until the window ends and the count starts again from zero. */
  resetInMs: number;
}

export interface RateLimitStore {
  /** Adds one hit to `key`; the first hit of a window starts a window of `windowMs`. Atomic. */
  increment(key: string, windowMs: number): Promise<WindowCount>;
  /** Takes one hit back from a live window (a reserved attempt that turned out not to count). */
  decrement(key: string): Promise<void>;
}

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');

const SWEEP_AT = 10_000;
const MAX_KEYS = 200_000;

/** One process's counters; windows run on the app's clock, so tests can move time. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();

  constructor(private readonly now: () => number) {}

  increment(key: string, windowMs: number): Promise<WindowCount> {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      this.sweep(now);
      window = { count: 0, endsAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return Promise.resolve({ count: window.count, resetInMs: window.endsAt - now });
  }

  decrement(key: string): Promise<void> {
    const window = this.windows.get(key);
    if (window && window.endsAt > this.now() && window.count > 0) window.count -= 1;
    return Promise.resolve();
  }

  /**
   * Ended windows are dropped when a new one starts. Past MAX_KEYS live windows the oldest
   * go too: a flood of fresh keys costs their limits, never the process's memory.
   */
  private sweep(now: number): void {
    if (this.windows.size < SWEEP_AT) return;
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    for (const key of this.windows.keys()) {
      if (this.windows.size < MAX_KEYS) break;
      this.windows.delete(key);
    }
  }
}
