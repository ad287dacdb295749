import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import type { RateLimitStore, WindowCount } from './rate-limit-store';

/** Each command is one script, so the count and its window move together (atomic in Redis). */
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;
const DECREMENT = `
if redis.call('PTTL', KEYS[1]) > 0 and tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  redis.call('DECR', KEYS[1])
end
return 0`;

interface LimitScripts {
  rateLimitIncrement(key: string, windowMs: number): Promise<[number, number]>;
  rateLimitDecrement(key: string): Promise<number>;
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
    redis.defineCommand('rateLimitIncrement', { numberOfKeys: 1, lua: INCREMENT });
    redis.defineCommand('rateLimitDecrement', { numberOfKeys: 1, lua: DECREMENT });
    this.redis = redis as Redis & LimitScripts;
    this.redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
    this.redis
      .connect()
      .catch((error: Error) => this.logger.warn(`Redis not reachable yet: ${error.message}`));
  }

  async increment(key: string, windowMs: number): Promise<WindowCount> {
    const [count, ttl] = await this.redis.rateLimitIncrement(key, windowMs);
    return { count, resetInMs: ttl };
  }

  async decrement(key: string): Promise<void> {
    await this.redis.rateLimitDecrement(key);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
