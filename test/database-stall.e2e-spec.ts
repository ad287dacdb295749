import { signUp, TestUser } from './helpers/accounts';
import { api } from './helpers/client';
import { fail, okData } from './helpers/envelopes';
import { holdTable } from './helpers/held-table';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

const DEADLINE_SECONDS = 2;

/**
 * A database that takes the connection and then does not answer (here: a lock held
 * elsewhere; MySQL would wait 50 s for a row lock and indefinitely for a table lock). The
 * query deadline (DATABASE_QUERY_TIMEOUT_SECONDS) turns that into a 503 within the deadline
 * plus a second; the same app serves again as soon as the database does. A frozen server
 * (SIGSTOP) is `npm run fault-test`.
 */
describe('a database that does not answer within the query deadline', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: TestUser & { token: string };

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { DATABASE_QUERY_TIMEOUT_SECONDS: String(DEADLINE_SECONDS) } });
    alice = await signUp(t, smtp, 'stall');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('answers 503 Service unavailable within the deadline plus a second, then serves again', async () => {
    const holder = await holdTable(t, 'sessions');
    let elapsed: number;
    try {
      const started = performance.now();
      const response = await api(t, alice, 'post', 'sessions/').send({ name: 'while locked' });
      elapsed = performance.now() - started;
      expect([response.status, response.body]).toEqual([503, fail('Service unavailable')]);
    } finally {
      await holder.release();
    }
    expect(elapsed).toBeLessThan(DEADLINE_SECONDS * 1000 + 1000);

    const after = await api(t, alice, 'post', 'sessions/').send({ name: 'after the lock' });
    expect([after.status, after.body]).toEqual([201, okData(null)]);
    const ready = await t.http().get('/api/v1/health/ready');
    expect(ready.status).toBe(200);
  }, 60_000);

  it('answers reads past the deadline 503 on MySQL, more of them than the pool holds, and drops their connections', async () => {
    const holder = await holdTable(t, 'sessions');
    let answers: { status: number; body: unknown }[];
    try {
      // Twelve at once: a stuck connection returned to the pool of ten would keep the next
      // reads waiting on it; each is destroyed instead.
      answers = await Promise.all(Array.from({ length: 12 }, () => api(t, alice, 'get', 'sessions/')));
    } finally {
      await holder.release();
    }
    const after = await api(t, alice, 'get', 'sessions/');
    expect(after.status).toBe(200);
    // SQLite's WAL lets a reader go on beside a writer's lock: it saw what it sees now.
    const whileHeld =
      t.config.database.type === 'sqlite'
        ? { status: 200, body: after.body as unknown }
        : { status: 503, body: fail('Service unavailable') };
    expect(answers.map(({ status, body }) => ({ status, body }))).toEqual(Array(12).fill(whileHeld));
  }, 60_000);
});
