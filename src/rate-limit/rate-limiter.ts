import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { mailboxOf } from '../users/mailbox';
import { ApiError, tooManyRequests } from '../common/api-error';
import { RATE_LIMIT_STORE } from './rate-limit-store';
import type { Acquired, RateLimitStore } from './rate-limit-store';
import { Metrics } from '../metrics/metrics';

export interface Limit {
  /** Names the limit in the metrics (a constant: never a key, which holds an address or an account). */
  name: string;
  limit: number;
  windowMs: number;
}

/** Mails of one kind to one mailbox, and the requests that would send one: the bound on an inbox. */
export const MAILBOX_LIMIT: Limit = { name: 'mailbox', limit: 10, windowMs: 15 * 60_000 };

/**
 * The mailbox an email reaches (mailboxOf), hashed so a huge address makes a short key: the
 * counts by mailbox use it, so the addresses that reach one inbox (`victim+1@`, `Victim@`,
 * `v.ictim@gmail.com`) share one budget.
 */
export function mailboxKey(email: string): string {
  return `mailbox:${createHash('sha256').update(mailboxOf(email)).digest('base64url')}`;
}

/** The key of an account's failed logins from everywhere (the ASVS bound; see account-rate-limit.ts). */
export function accountFailureKey(userId: number): string {
  return `fail:user:${userId}`;
}

/** A recorded hit, to hand back if the attempt turns out not to count; what its window has left. */
export interface Taken {
  key: string;
  hit: string;
  remaining: number;
  resetMs: number;
}

/** Limits on the shared counters, as every limited route takes them. */
@Injectable()
export class RateLimiter {
  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    private readonly metrics: Metrics,
  ) {}

  /** One hit on `key`, or 429 with Retry-After when `limit` hits already fall in the window. */
  async take(key: string, limit: Limit): Promise<Taken> {
    const acquired = await this.acquire(key, limit);
    if (!acquired.ok) throw tooManyRequests(acquired.retryAfterMs);
    return { key, ...acquired };
  }

  /** One hit on `key` if `limit` allows it; null (no error) when the window is full. */
  async tryTake(key: string, limit: Limit): Promise<Taken | null> {
    const acquired = await this.acquire(key, limit);
    return acquired.ok ? { key, ...acquired } : null;
  }

  /** Forgets every hit on `key`. */
  clear(key: string): Promise<void> {
    return this.reach(() => this.store.clear(key));
  }

  /** Hands back a hit that turned out not to count. */
  giveBack(taken: Taken): Promise<void> {
    return this.reach(() => this.store.release(taken.key, taken.hit));
  }

  private async acquire(key: string, { name, limit, windowMs }: Limit): Promise<Acquired> {
    const acquired = await this.reach(() => this.store.acquire(key, limit, windowMs));
    if (!acquired.ok) this.metrics.rateLimitRefusals.inc({ limit: name });
    return acquired;
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
