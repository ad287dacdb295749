import { readdirSync, readFileSync } from 'node:fs';
import bcrypt from 'bcryptjs';
import { BcryptPool } from './bcrypt-pool';

describe('BcryptPool', () => {
  // An event loop counted quiet, so both threads hash (the loop's load has its own tests below).
  const pool = new BcryptPool(2, () => false);
  afterAll(() => pool.close());

  it('hashes in workers with the given cost, compatible with bcryptjs', async () => {
    const hash = await pool.hash('S3cret!pass', 4);
    expect(hash).toMatch(/^\$2b\$04\$/);
    expect(bcrypt.compareSync('S3cret!pass', hash)).toBe(true);
    expect(await pool.compare('S3cret!pass', hash)).toBe(true);
    expect(await pool.compare('wrong', hash)).toBe(false);
  });

  it('verifies the $2a and $2b hashes bcryptjs made, so existing passwords keep working', async () => {
    // A $2a hash: bcryptjs keeps the version of the salt it is given.
    const hashes = [
      bcrypt.hashSync('S3cret!pass', 4),
      bcrypt.hashSync('S3cret!pass', '$2a$04$abcdefghijklmnopqrstuu'),
    ];
    expect(hashes.map((hash) => hash.slice(0, 4))).toEqual(['$2b$', '$2a$']);
    for (const hash of hashes) {
      expect(await pool.compare('S3cret!pass', hash)).toBe(true);
      expect(await pool.compare('S3cret!pasS', hash)).toBe(false);
    }
  });

  // Reads Linux's /proc, as every machine of this project is Linux.
  it('hashes and compares at a lower priority than the event loop (Linux keeps a nice value per thread)', async () => {
    await Promise.all([
      pool.compare('p', bcrypt.hashSync('p', 4)),
      pool.compare('q', bcrypt.hashSync('q', 4)),
    ]);
    const niceValues = readdirSync('/proc/self/task').map((thread) => {
      const stat = readFileSync(`/proc/self/task/${thread}/stat`, 'utf8');
      // Fields after the command name; the 17th of them is the nice value.
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    });
    expect(niceValues.filter((nice) => nice === 10).length).toBeGreaterThanOrEqual(2);
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
    await expect(pool.hash('x', 'not-a-cost' as unknown as number)).rejects.toThrow('into rust type `u32`');
    expect(await pool.compare('p', bcrypt.hashSync('p', 4))).toBe(true);
  });

  it('hashes one job fewer at a time while the event loop is busy, never none, and answers every job', async () => {
    let busy = true;
    const pools = [new BcryptPool(2, () => busy), new BcryptPool(1, () => busy)];
    const hash = bcrypt.hashSync('p', 4);
    try {
      const [two, one] = pools;
      const whileBusy = ['p', 'q', 'p'].map((password) => two.compare(password, hash));
      const onOneCore = ['p', 'q'].map((password) => one.compare(password, hash));
      expect([two.hashing, one.hashing]).toEqual([1, 1]);
      expect(await Promise.all(whileBusy)).toEqual([true, false, true]);
      expect(await Promise.all(onOneCore)).toEqual([true, false]);
      busy = false;
      const whileQuiet = ['p', 'q', 'p'].map((password) => two.compare(password, hash));
      expect(two.hashing).toBe(2);
      expect(await Promise.all(whileQuiet)).toEqual([true, false, true]);
    } finally {
      await Promise.all(pools.map((each) => each.close()));
    }
  });

  it('finishes the jobs it has taken before it closes', async () => {
    const closing = new BcryptPool(1, () => true);
    const hash = bcrypt.hashSync('p', 4);
    const taken = ['p', 'q', 'p'].map((password) => closing.compare(password, hash));
    await closing.close();
    expect(await Promise.all(taken)).toEqual([true, false, true]);
  });

  it('refuses work after close', async () => {
    const closed = new BcryptPool(1);
    await closed.close();
    await expect(closed.compare('a', 'b')).rejects.toThrow('bcrypt pool closed');
  });
});
