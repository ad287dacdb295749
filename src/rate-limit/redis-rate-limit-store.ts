import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { Acquired, RateLimitStore } from './rate-limit-store';

/**
 * One script per command, on Redis's own clock, so every replica's hits fall in one sorted
 * set per key (score: the hit's time) and the check and the hit are one atomic step.
 */
const ACQUIRE = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local limit = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs - windowMs)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return {0, tonumber(oldest[2]) + windowMs - nowMs}
end
redis.call('ZADD', KEYS[1], nowMs, ARGV[3])
redis.call('PEXPIRE', KEYS[1], windowMs)
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {1, ARGV[3], limit - count - 1, tonumber(first[2]) + windowMs - nowMs}`;

interface LimitScripts {
  rateLimitAcquire(
    key: string,
    limit: number,
    windowMs: number,
    hit: string,
  ): Promise<[number, number | string, number?, number?]>;
}

/** A Redis call that did not answer in time fails the request (503) instead of hanging it. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * Counters every replica shares. Without Redis a limit cannot be checked, and an account
 * endpoint then answers 503 rather than let guesses through unbounded (fail closed).
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly logger = new Logger('RateLimitStore');
  private readonly redis: Redis & LimitScripts;

  constructor(url: string, keyPrefix = 'svc:rl:') {
    const redis = new Redis(url, {
      keyPrefix,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      commandTimeout: COMMAND_TIMEOUT_MS,
    });
    // Sent once and then called by hash (EVALSHA).
    redis.defineCommand('rateLimitAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    this.redis = redis as Redis & LimitScripts;
    this.redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
    this.redis
      .connect()
      .catch((error: Error) => this.logger.warn(`Redis not reachable yet: ${error.message}`));
  }

  async acquire(key: string, limit: number, windowMs: number): Promise<Acquired> {
    const [ok, value, remaining, resetMs] = await this.redis.rateLimitAcquire(
      key,
      limit,
      windowMs,
      randomUUID(),
    );
    return ok === 1
      ? { ok: true, hit: String(value), remaining: Number(remaining), resetMs: Number(resetMs) }
      : { ok: false, retryAfterMs: Number(value) };
  }

  async release(key: string, hit: string): Promise<void> {
    await this.redis.zrem(key, hit);
  }

  async clear(key: string): Promise<void> {
    await this.redis.del(key);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
