/**
 * Sliding windows of hits, shared by every check that bounds attempts (account endpoints,
 * uploads): at most `limit` hits in any span of `windowMs`, not per calendar window, so
 * "100 an hour" cannot become 200 across a window's edge. In the process by default; in Redis
 * when REDIS_URL is set, so every replica sees the same hits.
 */
/**
 * A hit taken, with what is left of the window after it (`remaining` hits, and `resetMs` until
 * its oldest hit ages out and one more is free), or a refusal with the time until one is free.
 */
export type Acquired =
  { ok: true; hit: string; remaining: number; resetMs: number } | { ok: false; retryAfterMs: number };

export interface RateLimitStore {
  /** Records a hit on `key` if fewer than `limit` fall in the last `windowMs`. Atomic. */
  acquire(key: string, limit: number, windowMs: number): Promise<Acquired>;
  /** Takes a recorded hit back (a reserved attempt that turned out not to count). */
  release(key: string, hit: string): Promise<void>;
  /** Forgets every hit on `key` (a count its owner has cleared, e.g. by a password reset). */
  clear(key: string): Promise<void>;
}

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');

const SWEEP_AT = 10_000;
const MAX_KEYS = 200_000;

/** One process's hits; windows run on the app's clock, so tests can move time. */
export class MemoryRateLimitStore implements RateLimitStore {
  /** Hit times by key, oldest first; each hit is named by a sequence number. */
  private readonly hits = new Map<string, Array<{ at: number; id: string }>>();
  private sequence = 0;

  constructor(private readonly now: () => number) {}

  acquire(key: string, limit: number, windowMs: number): Promise<Acquired> {
    const now = this.now();
    const live = (this.hits.get(key) ?? []).filter((hit) => hit.at > now - windowMs);
    if (live.length >= limit) {
      this.hits.set(key, live);
      return Promise.resolve({ ok: false, retryAfterMs: live[live.length - limit].at + windowMs - now });
    }
    const hit = { at: now, id: String((this.sequence += 1)) };
    live.push(hit);
    this.hits.delete(key);
    this.sweep(now, windowMs);
    this.hits.set(key, live);
    return Promise.resolve({
      ok: true,
      hit: hit.id,
      remaining: limit - live.length,
      resetMs: live[0].at + windowMs - now,
    });
  }

  release(key: string, hit: string): Promise<void> {
    const hits = this.hits.get(key);
    if (hits)
      this.hits.set(
        key,
        hits.filter((each) => each.id !== hit),
      );
    return Promise.resolve();
  }

  clear(key: string): Promise<void> {
    this.hits.delete(key);
    return Promise.resolve();
  }

  /**
   * Keys whose hits have all aged out go when the map grows. Past MAX_KEYS the least recently
   * hit go too: a flood of fresh keys costs their limits, never the process's memory.
   */
  private sweep(now: number, windowMs: number): void {
    if (this.hits.size < SWEEP_AT) return;
    for (const [key, hits] of this.hits) {
      if (hits.every((hit) => hit.at <= now - windowMs)) this.hits.delete(key);
    }
    for (const key of this.hits.keys()) {
      if (this.hits.size < MAX_KEYS) break;
      this.hits.delete(key);
    }
  }
}
