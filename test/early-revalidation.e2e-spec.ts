import { lacksScope } from '../src/common/access-scopes';
import { ConditionalAnswerInterceptor } from '../src/community-plugins/caching/conditional-answers';
import { login } from './helpers/accounts';
import { api } from './helpers/client';
import { queriesDuring } from './helpers/logged-queries';
import {
  benignPlugin,
  marketplaceApp,
  readThenApprove,
  SignedInUser,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';
import { holdTable } from './helpers/held-table';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, type TestApp } from './helpers/test-app';

jest.setTimeout(120_000);

const UNAUTHORIZED = { status: 'fail', message: 'Unauthorized' };
/** Headers that differ between any two answers. */
const PER_ANSWER = new Set(['date', 'x-request-id', 'etag', 'connection', 'keep-alive']);
const headersOf = (answer: { headers: Record<string, string> }) =>
  Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !PER_ANSWER.has(name)));

/**
 * Issue 44: an install's polls (the catalogue list and the manifest) are answered 304 before
 * Nest's pipeline (caching/early-revalidation.ts), with the same answer Nest's pipeline gives,
 * and every other case is left to it.
 */
describe("a poll's 304 decided before Nest's pipeline", () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let boss: SignedInUser;
  let intercepted: jest.SpyInstance;

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, bob, boss },
    } = await marketplaceApp(smtp, ['alice', 'bob', 'boss']));
    const answer = await upload(t, alice.token, {
      fields: validFields('Polled early'),
      file: benignPlugin(),
    });
    if (answer.status !== 201) throw new Error(`upload: ${answer.status} ${answer.text}`);
    await readThenApprove(t, boss.token, (answer.body as { data: { id: number } }).data.id).expect(200);
    intercepted = jest.spyOn(t.app.get(ConditionalAnswerInterceptor), 'intercept');
  }, 60_000);
  beforeEach(() => intercepted.mockClear());
  afterAll(async () => {
    intercepted.mockRestore();
    await t.close();
    await smtp.stop();
  });

  const tagOf = async (caller: SignedInUser, path: string) =>
    (await api(t, caller, 'get', path).expect(200)).headers.etag as string;

  it.each(['community-plugins/', 'community-plugins/manifest/'])(
    'GET and HEAD %s with the current tag: 304 with no body, the interceptor never reached',
    async (path) => {
      const etag = await tagOf(bob, path);
      intercepted.mockClear();
      for (const method of ['get', 'head'] as const) {
        const answer = await api(t, bob, method, path).set('If-None-Match', etag).expect(304);
        expect(answer.text ?? '').toBe('');
        expect(answer.headers.etag).toBe(etag);
        expect(answer.headers['cache-control']).toBe('private, no-cache');
        expect(answer.headers.vary).toBe('Authorization');
        expect(answer.headers['x-request-id']).toMatch(/\S/);
      }
      expect(intercepted).not.toHaveBeenCalled();
    },
  );

  it("the early 304's headers, for GET and HEAD, are the ones Nest's pipeline gives (one plugin's view, the same tag)", async () => {
    const page = await api(t, bob, 'get', 'community-plugins/').expect(200);
    const [plugin] = (page.body as { data: { plugins: Array<{ id: number }> } }).data.plugins;
    for (const method of ['get', 'head'] as const) {
      intercepted.mockClear();
      const early = await api(t, bob, method, 'community-plugins/')
        .set('If-None-Match', page.headers.etag as string)
        .expect(304);
      expect(intercepted).not.toHaveBeenCalled();
      const throughNest = await api(t, bob, method, `community-plugins/${plugin.id}/`)
        .set('If-None-Match', page.headers.etag as string)
        .expect(304);
      expect(intercepted).toHaveBeenCalledTimes(1);
      expect(headersOf(early)).toEqual(headersOf(throughNest));
      expect(early.headers.etag).toBe(throughNest.headers.etag);
    }
  });

  it('a tag that is not current, an admin, or no If-None-Match: the full answer from Nest, the caller read once', async () => {
    const etag = await tagOf(bob, 'community-plugins/');
    intercepted.mockClear();
    let stale: { headers: Record<string, string> } | undefined;
    const queries = await queriesDuring(t.dataSource, async () => {
      stale = await api(t, bob, 'get', 'community-plugins/').set('If-None-Match', '"r0.0.0.0.0"').expect(200);
    });
    expect(stale?.headers.etag).toBe(etag);
    expect(intercepted).toHaveBeenCalledTimes(1);
    // Admitted before Nest's pipeline, and not again in it.
    expect(
      queries.filter((query) => /user_login_tokens/.test(query) && /^\s*SELECT/i.test(query)),
    ).toHaveLength(1);

    const admin = await api(t, boss, 'get', 'community-plugins/').set('If-None-Match', '*').expect(200);
    expect(admin.headers.etag).toBeUndefined();
    await api(t, bob, 'get', 'community-plugins/').expect(200);
    expect(intercepted).toHaveBeenCalledTimes(3);
  });

  it('polls fired together with a write: none sent after its answer is told that its old copy is current', async () => {
    const page = await api(t, bob, 'get', 'community-plugins/').expect(200);
    const etag = page.headers.etag as string;
    const [plugin] = (page.body as { data: { plugins: Array<{ id: number }> } }).data.plugins;
    const poll = () => api(t, bob, 'get', 'community-plugins/').set('If-None-Match', etag);
    let writing = true;
    // Polls in flight all along, so reads of the version are under way when the write commits.
    const during = (async () => {
      const statuses: number[] = [];
      while (writing)
        statuses.push(...(await Promise.all([poll(), poll(), poll(), poll()])).map((a) => a.status));
      return statuses;
    })();
    await api(t, bob, 'put', `community-plugins/${plugin.id}/rating`).send({ stars: 2 }).expect(200);
    const after = await Promise.all(Array.from({ length: 12 }, poll));
    writing = false;
    expect(after.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    expect(new Set(after.map((answer) => answer.headers.etag)).size).toBe(1);
    expect(after[0].headers.etag).not.toBe(etag);
    expect((await during).every((status) => status === 304 || status === 200)).toBe(true);
  });

  it.each(['community-plugins/', 'community-plugins/manifest/'])(
    '%s with the current tag and a refused caller: the same refusal as without the tag',
    async (path) => {
      const etag = await tagOf(bob, path);
      for (const [caller, status, body] of [
        [null, 401, UNAUTHORIZED],
        [{ token: 'not-a-token' }, 401, UNAUTHORIZED],
        [{ token: `${bob.token}x` }, 401, UNAUTHORIZED],
      ] as const) {
        const plain = await api(t, caller, 'get', path).expect(status);
        const tagged = await api(t, caller, 'get', path).set('If-None-Match', etag).expect(status);
        expect(tagged.body).toEqual(body);
        expect(plain.body).toEqual(body);
        expect(tagged.headers.etag).toBeUndefined();
      }
    },
  );

  it('an access token is judged as in Nest: without the read scope 403, with it the 304', async () => {
    const made = async (scopes: string[]) =>
      (
        (
          await api(t, alice, 'post', 'account/tokens')
            .send({ name: `poll ${scopes}`, scopes })
            .expect(201)
        ).body as { data: { token: string } }
      ).data.token;
    const uploadOnly = { token: await made(['upload']) };
    const reader = { token: await made(['read']) };
    const etag = (await api(t, reader, 'get', 'community-plugins/manifest/').expect(200)).headers
      .etag as string;
    const refused = await api(t, uploadOnly, 'get', 'community-plugins/manifest/')
      .set('If-None-Match', etag)
      .expect(403);
    expect(refused.body).toEqual({ status: 'fail', message: lacksScope('read') });
    await api(t, reader, 'get', 'community-plugins/manifest/').set('If-None-Match', etag).expect(304);
  });

  it('a logged-out token cannot poll: 401, not the 304 it had', async () => {
    const token = await login(t, bob);
    const etag = await tagOf({ ...bob, token }, 'community-plugins/');
    await api(t, { token }, 'get', 'community-plugins/').set('If-None-Match', etag).expect(304);
    await api(t, { token }, 'get', 'logout/').expect(200);
    const after = await api(t, { token }, 'get', 'community-plugins/').set('If-None-Match', etag).expect(401);
    expect(after.body).toEqual(UNAUTHORIZED);
  });
});

describe("a poll's early 304 with PLUGIN_ANONYMOUS_READS=on", () => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { PLUGIN_ANONYMOUS_READS: 'on' } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('the manifest polled without a token: 304 marked public, before Nest; the catalogue still needs a token', async () => {
    const intercepted = jest.spyOn(t.app.get(ConditionalAnswerInterceptor), 'intercept');
    try {
      const manifest = await api(t, null, 'get', 'community-plugins/manifest/').expect(200);
      const etag = manifest.headers.etag as string;
      intercepted.mockClear();
      const polled = await api(t, null, 'get', 'community-plugins/manifest/')
        .set('If-None-Match', etag)
        .expect(304);
      expect(polled.headers['cache-control']).toBe('public, no-cache');
      expect(polled.headers.etag).toBe(etag);
      expect(intercepted).not.toHaveBeenCalled();
      const list = await api(t, null, 'get', 'community-plugins/').set('If-None-Match', '*').expect(401);
      expect(list.body).toEqual(UNAUTHORIZED);
    } finally {
      intercepted.mockRestore();
    }
  });
});

describe('a poll while the version cannot be read', () => {
  const DEADLINE_SECONDS = 2;
  const smtp = new SmtpSink();
  let t: TestApp;
  let reader: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { DATABASE_QUERY_TIMEOUT_SECONDS: String(DEADLINE_SECONDS) } });
    reader = await signUpAs(t, smtp, 'poller');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('answers 503 Service unavailable after one query deadline, not two, then 304 again', async () => {
    const etag = (await api(t, reader, 'get', 'community-plugins/manifest/').expect(200)).headers
      .etag as string;
    const poll = () => api(t, reader, 'get', 'community-plugins/manifest/').set('If-None-Match', etag);
    const holder = await holdTable(t, 'audit_chain');
    let answer: Awaited<ReturnType<typeof poll>>;
    let elapsed: number;
    try {
      const started = performance.now();
      answer = await poll();
      elapsed = performance.now() - started;
    } finally {
      await holder.release();
    }
    // SQLite's WAL lets a reader go on beside a writer's lock.
    const whileHeld =
      t.config.database.type === 'sqlite'
        ? { status: 304, body: {} }
        : { status: 503, body: { status: 'fail', message: 'Service unavailable' } };
    expect({ status: answer.status, body: answer.body as unknown }).toEqual(whileHeld);
    // One deadline: the early path does not hand a failed read to Nest to wait for again.
    expect(elapsed).toBeLessThan(DEADLINE_SECONDS * 1000 + 1500);
    await poll().expect(304);
  }, 60_000);
});
