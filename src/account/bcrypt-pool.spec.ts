import bcrypt from 'bcryptjs';
import { BcryptPool } from './bcrypt-pool';

describe('BcryptPool', () => {
  const pool = new BcryptPool(2);
  afterAll(() => pool.close());

  it('hashes in workers with the given cost, compatible with bcryptjs', async () => {
    const hash = await pool.hash('S3cret!pass', 4);
    expect(hash).toMatch(/^\$2b\$04\$/);
    expect(bcrypt.compareSync('S3cret!pass', hash)).toBe(true);
    expect(await pool.compare('S3cret!pass', hash)).toBe(true);
    expect(await pool.compare('wrong', hash)).toBe(false);
  });

  it('queues more jobs than workers and answers each one', async () => {
    const hash = bcrypt.hashSync('p', 4);
    const results = await Promise.all(
      Array.from({ length: 9 }, (_, i) => pool.compare(i % 3 === 0 ? 'p' : 'q', hash)),
    );
    expect(results).toEqual([true, false, false, true, false, false, true, false, false]);
  });

  it('keeps the event loop free while hashing', async () => {
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    await Promise.all([pool.hash('a', 10), pool.hash('b', 10)]);
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(5);
  });

  it('turns an error inside a worker into a rejection and keeps serving', async () => {
    await expect(pool.hash('x', 'not-a-cost' as unknown as number)).rejects.toThrow('Invalid salt version');
    expect(await pool.compare('p', bcrypt.hashSync('p', 4))).toBe(true);
  });

  it('refuses work after close', async () => {
    const closed = new BcryptPool(1);
    await closed.close();
    await expect(closed.compare('a', 'b')).rejects.toThrow('bcrypt pool closed');
  });
});
