import { ConfigurationRepository } from '../src/configuration/configuration.repository';
import { isDuplicateKeyError, isForeignKeyError } from '../src/database/integrity-error';
import { containsPattern, LIKE_ESCAPE } from '../src/database/like';
import { LOCK_TABLE, NamedLockTimeoutError, withNamedLock } from '../src/database/named-lock';
import { Transactions } from '../src/database/transactions';
import { SessionsRepository } from '../src/sessions/sessions.repository';
import { UsersRepository } from '../src/users/users.repository';
import { createTestApp, TestApp } from './helpers/test-app';
import { signUpAs } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';

/**
 * The shared helpers of src/database and the repositories' hand-written shortcuts, on the
 * real test database (SQLite, or MariaDB with TEST_DATABASE_URL).
 */
describe('database helpers and repository shortcuts', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  const isMysql = () => t.config.database.type === 'mysql';

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  describe('containsPattern, as the database reads it', () => {
    const matches = async (text: string, searched: string): Promise<boolean> => {
      const [row] = (await t.dataSource.query(
        `SELECT CASE WHEN ? LIKE ? ESCAPE '${LIKE_ESCAPE}' THEN 1 ELSE 0 END AS hit`,
        [text, containsPattern(searched)],
      )) as Array<{ hit: number | string }>;
      return Number(row.hit) === 1;
    };

    it.each([
      ['http://a.example/100%_done', '100%_done', true],
      ['http://a.example/100x_done', '100%', false],
      ['http://a.example/axb', 'a_b', false],
      ['http://a.example/a_b', 'a_b', true],
      ['http://a.example/wow!', 'wow!', true],
      ['http://a.example/wow', 'wow!', false],
      ['http://a.example/a\\b', 'a\\b', true],
      ['anything', '', true],
    ])('%j contains %j: %s', async (text, searched, expected) => {
      expect(await matches(text, searched)).toBe(expected);
    });
  });

  describe('duplicate-key and foreign-key detection on real errors', () => {
    it('tells a unique key violation from the driver’s error', async () => {
      const items = t.app.get(ConfigurationRepository);
      const [existing] = await items.all();
      const error = await t.dataSource
        .query('INSERT INTO configuration (`key`, value, descrip, section, dirty) VALUES (?, ?, ?, ?, ?)', [
          existing.key,
          'v',
          'd',
          's',
          0,
        ])
        .catch((caught: unknown) => caught);
      expect(isDuplicateKeyError(error)).toBe(true);
      expect(isForeignKeyError(error)).toBe(false);
    });

    it('tells a missing referenced row', async () => {
      const error = await t.app
        .get(SessionsRepository)
        .attachTarget(2_000_000_000, 2_000_000_000)
        .catch((caught: unknown) => caught);
      expect(isForeignKeyError(error)).toBe(true);
      expect(isDuplicateKeyError(error)).toBe(false);
    });

    it('skips existing keys when seeding, so replicas seeding at once do not fail', async () => {
      const items = t.app.get(ConfigurationRepository);
      const before = await items.all();
      const { id: _id, ...first } = before[0];
      await items.insertMissing([{ ...first, value: 'not this one' }]);
      const after = await items.all();
      expect(after).toHaveLength(before.length);
      expect(after.find((item) => item.key === first.key)?.value).toBe(first.value);
    });
  });

  describe('withNamedLock', () => {
    const LOCK = { name: 'svc_api_e2e_lock', guards: 'e2e test' };

    it('makes a second holder wait, and time out while the first holds the lock (MySQL); SQLite just runs the work', async () => {
      const result = await withNamedLock(t.dataSource, LOCK, async () => {
        if (!isMysql()) return 'ran';
        // Waits 0 s: the lock is held by the outer call, so this can only time out.
        const inner = await withNamedLock(t.dataSource, LOCK, () => Promise.resolve('inner ran'), 0).catch(
          (error: unknown) => error,
        );
        expect(inner).toBeInstanceOf(NamedLockTimeoutError);
        expect((inner as Error).message).toBe('Timed out waiting for the e2e test lock');
        return 'ran';
      });
      expect(result).toBe('ran');
      // Released afterwards, and after a failed work too: the next holder gets it at once.
      await expect(
        withNamedLock(t.dataSource, LOCK, () => Promise.reject(new Error('failed')), 0),
      ).rejects.toThrow('failed');
      expect(await withNamedLock(t.dataSource, LOCK, () => Promise.resolve('again'), 0)).toBe('again');
    });

    it('is a row, so a lock held on another Galera node counts; a holder whose lease ran out loses it (MySQL)', async () => {
      if (!isMysql()) return;
      // Taken by a replica that died (another process, another node): its lease is still running.
      await withNamedLock(t.dataSource, LOCK, () => Promise.resolve());
      await t.dataSource.query(`UPDATE ${LOCK_TABLE} SET holder = ?, expires_at = ? WHERE name = ?`, [
        'another-replica',
        Date.now() + 60_000,
        LOCK.name,
      ]);
      const refused = await withNamedLock(t.dataSource, LOCK, () => Promise.resolve('ran'), 0).catch(
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(NamedLockTimeoutError);
      // Its lease ran out: the lock is taken over, and left free afterwards.
      await t.dataSource.query(`UPDATE ${LOCK_TABLE} SET expires_at = ? WHERE name = ?`, [
        Date.now() - 1,
        LOCK.name,
      ]);
      expect(await withNamedLock(t.dataSource, LOCK, () => Promise.resolve('ran'), 0)).toBe('ran');
      const [row] = (await t.dataSource.query(`SELECT holder FROM ${LOCK_TABLE} WHERE name = ?`, [
        LOCK.name,
      ])) as Array<{ holder: string | null }>;
      expect(row.holder).toBeNull();
    });
  });

  describe('Transactions.run and write conflicts', () => {
    it('runs a transaction that lost a deadlock again from its start, so both rivals commit once (MySQL)', async () => {
      if (!isMysql()) return; // SQLite: one writer at a time, no deadlock to lose.
      const carol = await signUpAs(t, smtp, 'carol');
      const dave = await signUpAs(t, smtp, 'dave');
      const users = t.app.get(UsersRepository);
      const transactions = t.app.get(Transactions);
      // Each rival locks one user, waits until the other holds its own, then asks for the
      // other's: InnoDB breaks the cycle by rolling one back (error 1213), as Galera does
      // with a certification conflict.
      let runs = 0;
      let holding = 0;
      let bothHold!: () => void;
      const bothHolding = new Promise<void>((resolve) => (bothHold = resolve));
      const rival = (first: number, second: number) =>
        transactions.run(async (manager) => {
          runs += 1;
          await users.lockUser(manager, first);
          if (runs <= 2) {
            holding += 1;
            if (holding === 2) bothHold();
            await bothHolding;
          }
          await users.lockUser(manager, second);
          return 'committed';
        });
      expect(await Promise.all([rival(carol.id, dave.id), rival(dave.id, carol.id)])).toEqual([
        'committed',
        'committed',
      ]);
      expect(runs).toBe(3); // the victim ran twice, the winner once
    });
  });

  describe('UsersRepository.lockUser', () => {
    it('changes nothing in the row it locks', async () => {
      const alice = await signUpAs(t, smtp, 'alice');
      const users = t.app.get(UsersRepository);
      const before = await users.findById(alice.id);
      await t.dataSource.transaction((manager) => users.lockUser(manager, alice.id));
      expect(await users.findById(alice.id)).toEqual(before);
    });

    it('holds the user’s row until its transaction ends: another transaction cannot take it meanwhile (MySQL)', async () => {
      if (!isMysql()) return; // SQLite: one writer at a time, transactions run one after another.
      const bob = await signUpAs(t, smtp, 'bob');
      const users = t.app.get(UsersRepository);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = t.dataSource.transaction(async (manager) => {
        await users.lockUser(manager, bob.id);
        locked();
        await held;
      });
      await isLocked;
      const runner = t.dataSource.createQueryRunner();
      try {
        // Gives up at once instead of waiting: the row is held by `holder` the whole time.
        await runner.query('SET SESSION innodb_lock_wait_timeout = 1');
        await runner.startTransaction();
        const error = await users.lockUser(runner.manager, bob.id).catch((caught: unknown) => caught);
        expect((error as { driverError?: { code?: string } }).driverError?.code).toBe('ER_LOCK_WAIT_TIMEOUT');
        await runner.rollbackTransaction();
      } finally {
        release();
        await holder;
        await runner.query('SET SESSION innodb_lock_wait_timeout = DEFAULT');
        await runner.release();
      }
      // Once the holder committed, the row is free.
      await t.dataSource.transaction((manager) => users.lockUser(manager, bob.id));
    });
  });
});
