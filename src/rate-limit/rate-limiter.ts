import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { ApiError, tooManyRequests } from '../common/api-error';
import { RATE_LIMIT_STORE } from './rate-limit-store';
import type { RateLimitStore } from './rate-limit-store';

export interface Limit {
  limit: number;
  windowMs: number;
}

/** Limits on the shared counters, as every limited route takes them. */
@Injectable()
export class RateLimiter {
  constructor(@Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore) {}

  /** One hit on `key`; past the limit the hit is handed back and the request refused (429). */
  async take(key: string, { limit, windowMs }: Limit): Promise<void> {
    const { count, resetInMs } = await this.reach(() => this.store.increment(key, windowMs));
    if (count <= limit) return;
    await this.giveBack(key);
    throw tooManyRequests(resetInMs);
  }

  /** Hands back a hit that turned out not to count. */
  giveBack(key: string): Promise<void> {
    return this.reach(() => this.store.decrement(key));
  }

  /** A store that cannot answer fails the request closed: 503, never an uncounted attempt. */
  private async reach<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch {
      throw new ApiError(HttpStatus.SERVICE_UNAVAILABLE, 'Service unavailable');
    }
  }
}
