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
  /** The hits in the key's current window, without adding one (0 when none). */
  peek(key: string): Promise<WindowCount>;
  /** Forgets the key. */
  reset(key: string): Promise<void>;
}

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');

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

  peek(key: string): Promise<WindowCount> {
    const now = this.now();
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now) return Promise.resolve({ count: 0, resetInMs: 0 });
    return Promise.resolve({ count: window.count, resetInMs: window.endsAt - now });
  }

  reset(key: string): Promise<void> {
    this.windows.delete(key);
    return Promise.resolve();
  }

  /** Ended windows are dropped when a new one starts, so the map holds only live keys. */
  private sweep(now: number): void {
    if (this.windows.size < 10_000) return;
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}
