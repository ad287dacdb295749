import Redis from 'ioredis';
import { MemoryRateLimitStore, RateLimitStore } from './rate-limit-store';
import { RedisRateLimitStore } from './redis-rate-limit-store';

import { describeWithTestRedis, testRedisUrl } from '../../test/helpers/prerequisites';

const REDIS_URL = testRedisUrl();

describe('MemoryRateLimitStore', () => {
  let now = 0;
  const store = new MemoryRateLimitStore(() => now);

  it('allows at most limit hits in any window, not per calendar window', async () => {
    now = 0;
    for (let i = 0; i < 3; i += 1) expect((await store.acquire('k', 3, 1000)).ok).toBe(true);
    now = 999;
    expect(await store.acquire('k', 3, 1000)).toEqual({ ok: false, retryAfterMs: 1 });
    now = 1000;
    // Only the hits older than a window have gone: three hits at 0, none since.
    expect((await store.acquire('k', 3, 1000)).ok).toBe(true);
    expect((await store.acquire('k', 3, 1000)).ok).toBe(true);
    expect((await store.acquire('k', 3, 1000)).ok).toBe(true);
    expect((await store.acquire('k', 3, 1000)).ok).toBe(false);
  });

  it('tells what a window has left after a hit, and when its oldest hit ages out', async () => {
    now = 5_000;
    expect(await store.acquire('left', 3, 1000)).toMatchObject({ ok: true, remaining: 2, resetMs: 1000 });
    now = 5_400;
    expect(await store.acquire('left', 3, 1000)).toMatchObject({ ok: true, remaining: 1, resetMs: 600 });
  });

  it('takes back a released hit', async () => {
    now = 10_000;
    const first = await store.acquire('r', 1, 1000);
    expect((await store.acquire('r', 1, 1000)).ok).toBe(false);
    if (first.ok) await store.release('r', first.hit);
    expect((await store.acquire('r', 1, 1000)).ok).toBe(true);
  });

  it('forgets every hit of a cleared key', async () => {
    now = 20_000;
    for (let i = 0; i < 2; i += 1) await store.acquire('c', 2, 1000);
    expect((await store.acquire('c', 2, 1000)).ok).toBe(false);
    await store.clear('c');
    expect((await store.acquire('c', 2, 1000)).ok).toBe(true);
  });
});

describeWithTestRedis('RedisRateLimitStore (the test suite’s Redis database)', () => {
  // Connected in beforeAll only: a block skipped for want of Redis must not leave a client retrying.
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  let store: RedisRateLimitStore;
  beforeAll(async () => {
    await redis.connect();
    await redis.flushdb();
    store = new RedisRateLimitStore(REDIS_URL);
  });
  afterAll(async () => {
    await store.close();
    await redis.flushdb();
    await redis.quit();
  });

  it('lets exactly limit hits through when they are sent at once', async () => {
    const answers = await Promise.all(Array.from({ length: 25 }, () => store.acquire('burst', 10, 60_000)));
    expect(answers.filter((answer) => answer.ok)).toHaveLength(10);
    // Each hit let through is told what is left: 9 down to 0, once each.
    expect(answers.flatMap((answer) => (answer.ok ? [answer.remaining] : [])).sort((a, b) => a - b)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    for (const refused of answers.filter((answer) => !answer.ok)) {
      expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(59_000);
    }
  });

  it('takes back a released hit', async () => {
    const first = await (store as RateLimitStore).acquire('one', 1, 60_000);
    expect((await store.acquire('one', 1, 60_000)).ok).toBe(false);
    if (first.ok) await store.release('one', first.hit);
    expect((await store.acquire('one', 1, 60_000)).ok).toBe(true);
  });

  it('forgets every hit of a cleared key', async () => {
    for (let i = 0; i < 2; i += 1) await store.acquire('cleared', 2, 60_000);
    expect((await store.acquire('cleared', 2, 60_000)).ok).toBe(false);
    await store.clear('cleared');
    expect((await store.acquire('cleared', 2, 60_000)).ok).toBe(true);
  });
});
