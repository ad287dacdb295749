import { signUp, TestUser } from './helpers/accounts';
import { expectFail } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';
import { MAX_LIMIT } from '../src/targets/dto/target.dto';

type Caller = TestUser & { token: string };

const MAX_TARGETS = 5;
const MAX_SESSIONS = 3;

/**
 * Issue 21, "no request can exhaust the server": per-user caps on targets and sessions, held
 * for requests sent at once, and a largest page for the target list whatever `limit` says.
 * On SQLite and on MariaDB (TEST_DATABASE_URL).
 */
describe('per-user caps and the largest page', () => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({
      smtp,
      env: { MAX_TARGETS_PER_USER: String(MAX_TARGETS), MAX_SESSIONS_PER_USER: String(MAX_SESSIONS) },
    });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const call = (user: Caller, method: 'get' | 'post' | 'delete', path: string) =>
    t.http()[method](`/api/v1/${path}`).set('Authorization', `Bearer ${user.token}`);
  const countOf = async (table: string, user: Caller) => {
    const [{ n }] = (await t.dataSource.query(
      `SELECT COUNT(*) AS n FROM ${table} x JOIN users u ON u.id = x.user_id WHERE u.email = ?`,
      [user.email],
    )) as Array<{ n: number | string }>;
    return Number(n);
  };

  it(`creates at most ${MAX_TARGETS} targets per user when 12 are sent at once; the rest answer 409`, async () => {
    const user = await signUp(t, smtp, 'captargets');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call(user, 'post', 'targets/').send({ target_url: `http://cap${i}.example/` }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(MAX_TARGETS);
    for (const refused of answers.filter((answer) => answer.status !== 201)) {
      expectFail(
        refused,
        409,
        `Target limit reached: at most ${MAX_TARGETS} targets per user; delete one first`,
      );
    }
    expect(await countOf('targets', user)).toBe(MAX_TARGETS);
    // A deleted target makes room again.
    const [first] = answers.filter((answer) => answer.status === 201);
    await call(user, 'delete', `targets/${first.body.data.id as number}`).expect(200);
    await call(user, 'post', 'targets/').send({ target_url: 'http://again.example/' }).expect(201);
    // Another user has a cap of their own.
    const other = await signUp(t, smtp, 'capother');
    await call(other, 'post', 'targets/').send({ target_url: 'http://cap0.example/' }).expect(201);
  });

  it(`creates at most ${MAX_SESSIONS} sessions per user when 9 are sent at once; the rest answer 409`, async () => {
    const user = await signUp(t, smtp, 'capsessions');
    const answers = await Promise.all(
      Array.from({ length: 9 }, (_, i) => call(user, 'post', 'sessions/').send({ name: `s${i}` })),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(MAX_SESSIONS);
    for (const refused of answers.filter((answer) => answer.status !== 201)) {
      expectFail(
        refused,
        409,
        `Session limit reached: at most ${MAX_SESSIONS} sessions per user; delete one first`,
      );
    }
    expect(await countOf('sessions', user)).toBe(MAX_SESSIONS);
  });

  it('does not let a target make a default session past the session cap', async () => {
    const user = await signUp(t, smtp, 'capdefault');
    for (let i = 0; i < MAX_SESSIONS; i += 1) {
      await call(user, 'post', 'sessions/')
        .send({ name: `kept${i}` })
        .expect(201);
    }
    const sessions = (await call(user, 'get', 'sessions/').expect(200)).body.data as Array<{ id: number }>;
    const active = sessions.find((session) => (session as { active?: boolean }).active)!;
    await call(user, 'delete', `sessions/${active.id}`).expect(200);
    await call(user, 'post', 'sessions/').send({ name: 'again' }).expect(201);
    await call(user, 'delete', `sessions/${sessions[0].id}`).expect(200);
    // Now no session is active (the active one may be gone) or one is: either way the cap holds.
    await call(user, 'post', 'targets/').send({ target_url: 'http://default.example/' });
    expect(await countOf('sessions', user)).toBeLessThanOrEqual(MAX_SESSIONS);
  });
});

describe('the largest page of targets', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let user: Caller;
  const many = MAX_LIMIT + 7;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { MAX_TARGETS_PER_USER: String(many) } });
    user = await signUp(t, smtp, 'pager');
    const first = await t
      .http()
      .post('/api/v1/targets/')
      .set('Authorization', `Bearer ${user.token}`)
      .send({ target_url: 'http://page.example/0' })
      .expect(201);
    const id = first.body.data.id as number;
    // The rest written directly: hundreds of requests would only slow the test down.
    for (let i = 1; i < many; i += 1) {
      await t.dataSource.query(
        'INSERT INTO targets (user_id, target_url, target_url_hash, url_scheme, host_name, port_number, host_path, scope, created_at) ' +
          'SELECT user_id, ?, ?, url_scheme, host_name, port_number, ?, scope, created_at FROM targets WHERE id = ?',
        [`http://page.example/${i}`, `hash-${i}`, `/${i}`, id],
      );
    }
    const [session] = (await t.dataSource.query(
      'SELECT session_id AS id FROM session_targets WHERE target_id = ?',
      [id],
    )) as Array<{ id: number }>;
    await t.dataSource.query(
      'INSERT INTO session_targets (session_id, target_id) SELECT ?, id FROM targets WHERE user_id = (SELECT user_id FROM targets WHERE id = ?) AND id <> ?',
      [session.id, id, id],
    );
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const list = (query: string) =>
    t.http().get(`/api/v1/targets/${query}`).set('Authorization', `Bearer ${user.token}`).expect(200);

  it.each(['', '?limit=-1', `?limit=${MAX_LIMIT}`])(
    `answers %j with at most ${MAX_LIMIT} targets, X-Total-Count counting all`,
    async (query) => {
      const response = await list(query);
      expect(response.body.data).toHaveLength(MAX_LIMIT);
      expect(response.headers['x-total-count']).toBe(String(many));
    },
  );

  it('pages through all of them with offset', async () => {
    const rest = await list(`?limit=-1&offset=${MAX_LIMIT}`);
    expect(rest.body.data).toHaveLength(many - MAX_LIMIT);
    expect(rest.headers['x-total-count']).toBe(String(many));
  });

  it('answers 30 lists of the largest page sent at once, each bounded', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, () => list('?limit=-1')));
    for (const answer of answers) {
      expect(answer.body.data).toHaveLength(MAX_LIMIT);
      expect(Buffer.byteLength(answer.text)).toBeLessThan(2.3 * 1024 * 1024);
    }
  });
});
