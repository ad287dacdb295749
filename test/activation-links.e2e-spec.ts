import { ActivationLinksByAddress1763698000000 } from '../migrations/1763698000000-ActivationLinksByAddress';
import { ActivationLinkSweeper } from '../src/account/activation-link-sweeper';
import { OutboxJob } from '../src/outbox/outbox-job.entity';
import { Outbox } from '../src/outbox/outbox.service';
import { newUser, register, signUp, type TestUser } from './helpers/accounts';
import { okMessage as ok } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

const HOUR = 3_600_000;

interface LinkRow {
  id: number;
  key: string;
  expires: Date;
}

/**
 * Issue 21: `generate/confirm_email` does the same work for every address, so a request after
 * it cannot tell whether the address has an account (timing is measured by
 * scripts/timing-pairs.ts, never asserted). The request writes one link record and one outbox
 * job whatever the address; the worker mails the link only to an inactive account. On SQLite
 * and on MariaDB (TEST_DATABASE_URL).
 */
describe('activation links: the same rows for every address', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let outbox: Outbox;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SERVER_ADDR: 'svc.example.test', FRONTEND_PORT: '8443' } });
    outbox = t.app.get(Outbox);
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  const ask = async (email: string) =>
    expect((await t.http().post('/api/v1/generate/confirm_email/').send({ email })).body).toEqual(
      ok('Email send successful'),
    );
  const verify = async (key: string) =>
    (await t.http().get(`/api/v1/verify/confirm_email/${key}`)).body as unknown;
  const mailsTo = (user: TestUser) => smtp.received.filter((mail) => mail.to.includes(user.email));
  const mailedKey = (user: TestUser) =>
    /\/email-verify\/([0-9a-f-]{36})/.exec(mailsTo(user).at(-1)?.text ?? '')?.[1];

  /**
   * The link records of an address, oldest first as the service orders them (expiry, then id):
   * requests sent at once may insert in another order than they read the clock.
   */
  async function linksOf(email: string): Promise<LinkRow[]> {
    const rows = (await t.dataSource.query(
      'SELECT id, key_value, expiration_time FROM email_confirmation WHERE email_key = ? ' +
        'ORDER BY expiration_time, id',
      [email.toLowerCase()],
    )) as Array<{ id: number | string; key_value: string; expiration_time: string | Date }>;
    return rows.map((row) => ({
      id: Number(row.id),
      key: row.key_value,
      expires:
        row.expiration_time instanceof Date
          ? row.expiration_time
          : new Date(`${row.expiration_time.replace(' ', 'T')}Z`),
    }));
  }

  async function jobs(): Promise<Array<{ kind: string; payload: unknown }>> {
    const rows = (await t.dataSource.query('SELECT kind, payload FROM outbox_jobs ORDER BY id')) as Array<{
      kind: string;
      payload: string;
    }>;
    return rows.map((row) => ({ kind: row.kind, payload: JSON.parse(row.payload) as unknown }));
  }

  /** Requests made while the worker is stopped leave their rows for the test to read. */
  async function withWorkerStopped(work: () => Promise<void>): Promise<void> {
    await outbox.onModuleDestroy();
    try {
      await work();
    } finally {
      outbox.onApplicationBootstrap();
    }
  }

  it('writes one link and one job for an inactive account, an active one and an unknown address alike, and mails only the first', async () => {
    const inactive = newUser('inactive');
    await register(t, inactive);
    const active = await signUp(t, smtp, 'active');
    const unknown = newUser('unknown');
    await t.deliverMail();
    smtp.clear();

    const started = t.clock.now().getTime();
    await withWorkerStopped(async () => {
      for (const user of [inactive, active, unknown]) await ask(user.email);
      const links = await Promise.all([inactive, active, unknown].map((user) => linksOf(user.email)));
      const ended = t.clock.now().getTime();
      for (const [link] of links) {
        expect(link.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(link.expires.getTime()).toBeGreaterThanOrEqual(started + HOUR - 1);
        expect(link.expires.getTime()).toBeLessThanOrEqual(ended + HOUR + 1);
      }
      expect(links.map((rows) => rows.length)).toEqual([1, 1, 1]);
      expect(await jobs()).toEqual(
        links.map(([link]) => ({ kind: 'activation-mail', payload: { confirmationId: link.id } })),
      );
    });
    await t.deliverMail();

    expect(await jobs()).toEqual([]);
    expect(mailsTo(inactive).map((mail) => mail.subject)).toEqual(['Account Activation']);
    expect(mailsTo(active)).toEqual([]);
    expect(mailsTo(unknown)).toEqual([]);
    expect(smtp.received).toHaveLength(1);
    const [inactiveLink] = await linksOf(inactive.email);
    expect(mailedKey(inactive)).toBe(inactiveLink.key);

    // The links nobody was mailed confirm nothing.
    expect(await verify((await linksOf(unknown.email))[0].key)).toEqual(ok('Invalid Link'));
    expect(await verify((await linksOf(active.email))[0].key)).toEqual(ok('Invalid Link'));
    expect(await verify(inactiveLink.key)).toEqual(ok('Email Verified'));
    // Confirming ends every link of the address.
    expect(await linksOf(inactive.email)).toEqual([]);
  });

  it('mails only the newest of links asked for at once; the older ones are dead', async () => {
    const user = newUser('burst');
    await register(t, user);
    smtp.clear();
    await withWorkerStopped(async () => {
      await Promise.all(Array.from({ length: 5 }, () => ask(user.email)));
    });
    await t.deliverMail();
    const links = await linksOf(user.email);
    expect(links).toHaveLength(5);
    expect(mailsTo(user)).toHaveLength(1);
    expect(mailedKey(user)).toBe(links[4].key);
    expect(await verify(links[0].key)).toEqual(ok('Invalid Link'));
    expect(await verify(links[4].key)).toEqual(ok('Email Verified'));
    expect(await verify(links[4].key)).toEqual(ok('Invalid Link'));
  });

  it('answers Link Expired for a day after a link expires, then the sweep deletes it', async () => {
    const user = newUser('sweep');
    await register(t, user);
    await ask(user.email);
    await t.deliverMail();
    const key = mailedKey(user)!;
    const sweeper = t.app.get(ActivationLinkSweeper);

    t.clock.advance(2 * HOUR);
    expect(await verify(key)).toEqual(ok('Link Expired', { email: user.email }));
    await sweeper.sweep();
    expect(await linksOf(user.email)).toHaveLength(1);

    t.clock.advance(24 * HOUR);
    expect(await sweeper.sweep()).toBeGreaterThanOrEqual(1);
    expect(await linksOf(user.email)).toEqual([]);
    expect(await verify(key)).toEqual(ok('Invalid Link'));
  });

  it('handles a request job written before the upgrade (`activation-request` with the address) like a new request', async () => {
    const user = newUser('oldjob');
    await register(t, user);
    const ghost = newUser('oldghost');
    smtp.clear();
    const now = t.clock.now();
    for (const email of [user.email, ghost.email]) {
      await t.dataSource.getRepository(OutboxJob).insert({
        kind: 'activation-request',
        payload: JSON.stringify({ email }),
        attempts: 0,
        nextAttemptAt: now,
        lockedUntil: null,
        lastError: null,
        createdAt: now,
      });
    }
    await t.deliverMail();
    expect(await jobs()).toEqual([]);
    expect(smtp.received.map((mail) => mail.to)).toEqual([[user.email]]);
    expect(await linksOf(ghost.email)).toHaveLength(1);
    expect(await verify(mailedKey(user)!)).toEqual(ok('Email Verified'));
  });

  it('the migration keeps the links already mailed, back to links by user and forward again', async () => {
    const user = newUser('migrated');
    await register(t, user);
    await ask(user.email);
    await t.deliverMail();
    const key = mailedKey(user)!;
    const [{ id: userId }] = (await t.dataSource.query('SELECT id FROM users WHERE email = ?', [
      user.email,
    ])) as Array<{ id: number }>;
    const migration = new ActivationLinksByAddress1763698000000();
    const runner = t.dataSource.createQueryRunner();
    try {
      await migration.down(runner);
      const old = (await t.dataSource.query('SELECT key_value, user_id FROM email_confirmation')) as Array<{
        key_value: string;
        user_id: number | string;
      }>;
      expect(old.filter((row) => row.key_value === key).map((row) => Number(row.user_id))).toEqual([
        Number(userId),
      ]);
      await migration.up(runner);
      // A second run finds the table done and changes nothing.
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    expect((await linksOf(user.email)).map((link) => link.key)).toEqual([key]);
    expect(await verify(key)).toEqual(ok('Email Verified'));
  });
});
