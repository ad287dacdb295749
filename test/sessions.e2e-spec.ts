import { signUp, signUpAdmin, TestUser } from './helpers/accounts';
import { api, Method } from './helpers/client';
import { expectFail, fail, okData as ok } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

type Caller = TestUser & { token: string };

const INCORRECT = 'Incorrect query parameters';
const INVALID_SESSION_ID = 'Invalid session id provided';
const INVALID_PARAMETER_TYPE = 'Invalid parameter type provided';
const INVALID_TARGET = 'Invalid target reference provided';
const ACTION_MUST_BE_NONE = 'Action must be None';
const DB_FAILURE = 'An unknown exception occurred when performing a DB operation';
const ADMIN_EMAIL = 'sessions-admin@example.com';

describe('sessions', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: Caller;
  let bob: Caller;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: ADMIN_EMAIL } });
    alice = await signUp(t, smtp, 'alice');
    bob = await signUp(t, smtp, 'bob');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const call = (user: Caller | null, method: Method, path: string) => api(t, user, method, path);

  const list = async (user: Caller): Promise<Array<{ id: number; name: string; active: boolean }>> =>
    (await call(user, 'get', 'sessions/').expect(200)).body.data;
  const createSession = async (user: Caller, name: string): Promise<number> => {
    const response = await call(user, 'post', 'sessions/').send({ name });
    expect([response.status, response.body]).toEqual([201, ok(null)]);
    const session = (await list(user)).find((candidate) => candidate.name === name);
    if (!session) throw new Error(`session ${name} not listed`);
    return session.id;
  };
  const createTarget = async (user: Caller, url: string): Promise<number> => {
    const response = await call(user, 'post', 'targets/').send({ target_url: url });
    expect(response.status).toBe(201);
    return response.body.data.id as number;
  };
  const getSession = async (user: Caller, id: number) =>
    (await call(user, 'get', `sessions/${id}`).expect(200)).body;
  const activeIds = async (user: Caller) => (await list(user)).filter((s) => s.active).map((s) => s.id);
  describe('forms', () => {
    const broken = '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\nunfinished';
    it('reads a multipart form as arguments, like JSON and urlencoded bodies', async () => {
      const response = await call(alice, 'post', 'sessions/').field('name', 'posted as multipart');
      expect([response.status, response.body]).toEqual([201, ok(null)]);
      expect((await list(alice)).map((session) => session.name)).toContain('posted as multipart');
    });

    it('parses a form only once the caller is authenticated: 401 before a broken form is looked at', async () => {
      const stranger = await call(null, 'post', 'sessions/')
        .set('Content-Type', 'multipart/form-data; boundary=xyz')
        .send(broken);
      expect([stranger.status, stranger.body]).toEqual([401, fail('Unauthorized')]);
      const member = await call(alice, 'post', 'sessions/')
        .set('Content-Type', 'multipart/form-data; boundary=xyz')
        .send(broken);
      expect([member.status, member.body]).toEqual([400, fail('Malformed request body')]);
    });
  });

  /** An id no session has (yet). */
  const unknownId = async () => {
    const [row] = (await t.dataSource.query('SELECT MAX(id) AS id FROM sessions')) as Array<{
      id: number | null;
    }>;
    return Number(row.id ?? 0) + 1000;
  };

  describe('POST /api/v1/sessions/', () => {
    it('creates a session with HTTP 201 and data null, with or without the trailing slash', async () => {
      const first = await call(alice, 'post', 'sessions/').send({ name: 'post-json' });
      expect([first.status, first.body]).toEqual([201, ok(null)]);
      const second = await call(alice, 'post', 'sessions').type('form').send('name=post-form');
      expect([second.status, second.body]).toEqual([201, ok(null)]);
      const third = await call(alice, 'post', 'sessions/?name=post-query');
      expect([third.status, third.body]).toEqual([201, ok(null)]);
      const fourth = await call(alice, 'post', 'sessions/').field('name', 'post-multipart');
      expect([fourth.status, fourth.body]).toEqual([201, ok(null)]);
      const names = (await list(alice)).map((session) => session.name);
      expect(names).toEqual(
        expect.arrayContaining(['post-json', 'post-form', 'post-query', 'post-multipart']),
      );
    });

    it('makes the new session the only active one of the user', async () => {
      const older = await createSession(alice, 'older');
      expect(await activeIds(alice)).toEqual([older]);
      const newer = await createSession(alice, 'newer');
      expect(await activeIds(alice)).toEqual([newer]);
    });

    it('keeps names of up to 50 characters, trimmed', async () => {
      const name = 'n'.repeat(50);
      const id = await createSession(alice, name);
      expect((await getSession(alice, id)).data.name).toBe(name);
      await call(alice, 'post', 'sessions/').send({ name: '  padded  ' }).expect(201);
      expect((await list(alice)).map((session) => session.name)).toContain('padded');
    });

    it.each([
      ['no name', {}],
      ['an empty name', { name: '' }],
      ['a blank name', { name: '   ' }],
      ['a name of 51 characters', { name: 'n'.repeat(51) }],
      ['a name with a line break', { name: 'a\nb' }],
    ])('answers %s with 400 Incorrect query parameters', async (_, body) => {
      const before = await list(alice);
      expectFail(await call(alice, 'post', 'sessions/').send(body), 400, INCORRECT);
      expect(await list(alice)).toEqual(before);
    });

    it('answers a session id or an action in the path with 400 Incorrect query parameters', async () => {
      const id = await createSession(alice, 'with-path');
      for (const path of [
        `sessions/${id}`,
        `sessions/${id}/`,
        `sessions/${id}/add`,
        'sessions/abc',
        'sessions/99999/x',
      ]) {
        const response = await call(alice, 'post', path).send({ name: `from ${path}` });
        expect([path, response.status, response.body]).toEqual([path, 400, fail(INCORRECT)]);
      }
      expect((await list(alice)).filter((session) => session.name.startsWith('from '))).toEqual([]);
    });

    it('answers a duplicate name with the DB failure message and changes nothing', async () => {
      await createSession(alice, 'duplicate');
      const active = await createSession(alice, 'stays-active');
      const before = await list(alice);
      expectFail(await call(alice, 'post', 'sessions/').send({ name: 'duplicate' }), 400, DB_FAILURE);
      expectFail(await call(alice, 'post', 'sessions/').send({ name: ' duplicate ' }), 400, DB_FAILURE);
      expect(await list(alice)).toEqual(before);
      expect(await activeIds(alice)).toEqual([active]);
    });

    it('compares names exactly: case and accents make different names', async () => {
      await createSession(alice, 'Audit');
      await createSession(alice, 'audit');
      await createSession(alice, 'àudit');
      expect((await list(alice)).filter((s) => /^.udit$/i.test(s.name)).map((s) => s.name)).toEqual([
        'Audit',
        'audit',
        'àudit',
      ]);
    });
  });

  describe('GET /api/v1/sessions/', () => {
    it('lists the caller’s sessions as {id, name, active}, ordered by id, with or without the slash', async () => {
      const user = await signUp(t, smtp, 'lister');
      expect((await call(user, 'get', 'sessions').expect(200)).body).toEqual(ok([]));
      const one = await createSession(user, 'one');
      const two = await createSession(user, 'two');
      const expected = ok([
        { id: one, name: 'one', active: false },
        { id: two, name: 'two', active: true },
      ]);
      expect((await call(user, 'get', 'sessions/').expect(200)).body).toEqual(expected);
      expect((await call(user, 'get', 'sessions').expect(200)).body).toEqual(expected);
    });

    it('filters by active, true/false or 1/0 in any case, and refuses other values', async () => {
      const user = await signUp(t, smtp, 'filter');
      const one = await createSession(user, 'one');
      const two = await createSession(user, 'two');
      const ids = async (query: string) =>
        ((await call(user, 'get', `sessions/?${query}`).expect(200)).body.data as Array<{ id: number }>).map(
          (session) => session.id,
        );
      expect(await ids('active=true')).toEqual([two]);
      expect(await ids('active=TRUE')).toEqual([two]);
      expect(await ids('active=1')).toEqual([two]);
      expect(await ids('active=false')).toEqual([one]);
      expect(await ids('active=0')).toEqual([one]);
      expect(await ids('active=')).toEqual([one, two]);
      expect(await ids('unknown=1')).toEqual([one, two]);
      expectFail(await call(user, 'get', 'sessions/?active=yes'), 400, INCORRECT);
    });

    it('returns one session with its target ids', async () => {
      const id = await createSession(alice, 'get-one');
      const later = await createTarget(alice, 'http://get-one.example/b');
      const earlier = await createTarget(alice, 'http://get-one.example/a');
      await call(alice, 'patch', `sessions/${id}/add`).send({ target_id: later }).expect(200);
      await call(alice, 'patch', `sessions/${id}/add`).send({ target_id: earlier }).expect(200);
      const expected = ok({
        id,
        name: 'get-one',
        active: true,
        targets: [later, earlier].sort((a, b) => a - b),
      });
      expect((await call(alice, 'get', `sessions/${id}`).expect(200)).body).toEqual(expected);
      expect((await call(alice, 'get', `sessions/${id}/`).expect(200)).body).toEqual(expected);
    });

    it('answers an action segment with 422 Action must be None, before looking at the id', async () => {
      const id = await createSession(alice, 'get-action');
      const missing = await unknownId();
      for (const path of [
        `sessions/${id}/add`,
        `sessions/${id}/remove/`,
        `sessions/${id}/activate`,
        `sessions/${id}/none`,
        `sessions/${missing}/add`,
        'sessions/abc/add',
      ]) {
        const response = await call(alice, 'get', path);
        expect([path, response.status, response.body]).toEqual([path, 422, fail(ACTION_MUST_BE_NONE)]);
      }
    });

    it('answers an unknown or malformed session id with 400 Invalid session id provided', async () => {
      const missing = await unknownId();
      for (const id of [String(missing), 'abc', '0', '-1', '1.5', '1e2', '99999999999', '%20', ' 1']) {
        const response = await call(alice, 'get', `sessions/${encodeURIComponent(id)}`);
        expect([id, response.status, response.body]).toEqual([id, 400, fail(INVALID_SESSION_ID)]);
      }
    });
  });

  describe('PATCH /api/v1/sessions/<session_id>/<action>', () => {
    it('answers a missing session id with 400 Incorrect query parameters', async () => {
      expectFail(await call(alice, 'patch', 'sessions').send({ target_id: 1 }), 400, INCORRECT);
      expectFail(await call(alice, 'patch', 'sessions/').send({ target_id: 1 }), 400, INCORRECT);
    });

    it('answers an unknown or malformed session with 400 Invalid parameter type provided', async () => {
      const missing = await unknownId();
      const target = await createTarget(alice, 'http://patch-invalid.example/');
      for (const path of [
        `sessions/${missing}/activate`,
        `sessions/${missing}/add`,
        'sessions/abc/activate',
        'sessions/0/remove',
        'sessions/1.0/add',
        'sessions/abc/bogus',
        'sessions/abc',
      ]) {
        const response = await call(alice, 'patch', path).send({ target_id: target });
        expect([path, response.status, response.body]).toEqual([path, 400, fail(INVALID_PARAMETER_TYPE)]);
      }
    });

    it('answers a missing or unknown action with 400 Incorrect query parameters', async () => {
      const id = await createSession(alice, 'patch-action');
      expectFail(await call(alice, 'patch', `sessions/${id}`), 400, INCORRECT);
      expectFail(await call(alice, 'patch', `sessions/${id}/`), 400, INCORRECT);
      expectFail(await call(alice, 'patch', `sessions/${id}/delete`), 400, INCORRECT);
      expectFail(await call(alice, 'patch', `sessions/${id}/Activate`), 400, INCORRECT);
    });

    it('answers add or remove without target_id with 400 Incorrect query parameters', async () => {
      const id = await createSession(alice, 'patch-no-target');
      for (const action of ['add', 'remove']) {
        expectFail(await call(alice, 'patch', `sessions/${id}/${action}`), 400, INCORRECT);
        expectFail(
          await call(alice, 'patch', `sessions/${id}/${action}`).send({ target_id: '' }),
          400,
          INCORRECT,
        );
        expectFail(await call(alice, 'patch', `sessions/${id}/${action}`).send({ other: 1 }), 400, INCORRECT);
      }
    });

    it('answers an unknown or malformed target with 400 Invalid target reference provided', async () => {
      const id = await createSession(alice, 'patch-bad-target');
      const target = await createTarget(alice, 'http://patch-bad-target.example/');
      await call(alice, 'delete', `targets/${target}`).expect(200);
      for (const action of ['add', 'remove']) {
        for (const targetId of [String(target), 'abc', '0', '-3', '1.5', '99999999999']) {
          const response = await call(alice, 'patch', `sessions/${id}/${action}`).send({
            target_id: targetId,
          });
          expect([action, targetId, response.status, response.body]).toEqual([
            action,
            targetId,
            400,
            fail(INVALID_TARGET),
          ]);
        }
      }
      expect((await getSession(alice, id)).data.targets).toEqual([]);
    });

    it('adds a target (twice is harmless) and removes it, with target_id from JSON, form or query', async () => {
      const id = await createSession(alice, 'patch-add');
      const target = await createTarget(alice, 'http://patch-add.example/');
      expect(
        (await call(alice, 'patch', `sessions/${id}/add`).send({ target_id: target }).expect(200)).body,
      ).toEqual(ok(null));
      await call(alice, 'patch', `sessions/${id}/add/`).type('form').send(`target_id=${target}`).expect(200);
      await call(alice, 'patch', `sessions/${id}/add?target_id=${target}`).expect(200);
      expect((await getSession(alice, id)).data.targets).toEqual([target]);
      const links = (await t.dataSource.query(
        'SELECT COUNT(*) AS n FROM session_targets WHERE session_id = ?',
        [id],
      )) as Array<{ n: number | string }>;
      expect(Number(links[0].n)).toBe(1);

      expect(
        (
          await call(alice, 'patch', `sessions/${id}/remove`)
            .type('form')
            .send(`target_id=${target}`)
            .expect(200)
        ).body,
      ).toEqual(ok(null));
      expect((await getSession(alice, id)).data.targets).toEqual([]);
      // Removing what is not attached is harmless too.
      expect(
        (await call(alice, 'patch', `sessions/${id}/remove?target_id=${target}`).expect(200)).body,
      ).toEqual(ok(null));
    });

    it('attaches one target to several sessions', async () => {
      const first = await createSession(alice, 'shared-1');
      const second = await createSession(alice, 'shared-2');
      const target = await createTarget(alice, 'http://shared.example/');
      await call(alice, 'patch', `sessions/${first}/add`).send({ target_id: target }).expect(200);
      await call(alice, 'patch', `sessions/${second}/add`).send({ target_id: target }).expect(200);
      expect((await getSession(alice, first)).data.targets).toEqual([target]);
      expect((await getSession(alice, second)).data.targets).toEqual([target]);
    });

    it('activates a session: it becomes the only active one of the user, and stays so when repeated', async () => {
      const first = await createSession(alice, 'activate-1');
      const second = await createSession(alice, 'activate-2');
      expect(await activeIds(alice)).toEqual([second]);
      expect((await call(alice, 'patch', `sessions/${first}/activate`).expect(200)).body).toEqual(ok(null));
      expect(await activeIds(alice)).toEqual([first]);
      await call(alice, 'patch', `sessions/${first}/activate/`).expect(200);
      expect(await activeIds(alice)).toEqual([first]);
      expect((await getSession(alice, first)).data.active).toBe(true);
      expect((await getSession(alice, second)).data.active).toBe(false);
    });
  });

  describe('DELETE /api/v1/sessions/<session_id>', () => {
    it('answers a missing session id or an action with 400 Incorrect query parameters', async () => {
      const id = await createSession(alice, 'delete-path');
      const missing = await unknownId();
      for (const path of [
        'sessions',
        'sessions/',
        `sessions/${id}/activate`,
        `sessions/${id}/x/`,
        `sessions/${missing}/add`,
      ]) {
        const response = await call(alice, 'delete', path);
        expect([path, response.status, response.body]).toEqual([path, 400, fail(INCORRECT)]);
      }
      expect((await getSession(alice, id)).data.name).toBe('delete-path');
    });

    it('answers an unknown or malformed session with 400 Invalid session id provided', async () => {
      const missing = await unknownId();
      for (const id of [String(missing), 'abc', '0', '-1', '2.0']) {
        const response = await call(alice, 'delete', `sessions/${id}`);
        expect([id, response.status, response.body]).toEqual([id, 400, fail(INVALID_SESSION_ID)]);
      }
    });

    it('deletes the session and its target links, not the targets', async () => {
      const id = await createSession(alice, 'delete-me');
      const target = await createTarget(alice, 'http://delete-me.example/');
      await call(alice, 'patch', `sessions/${id}/add`).send({ target_id: target }).expect(200);
      expect((await call(alice, 'delete', `sessions/${id}/`).expect(200)).body).toEqual(ok(null));
      expectFail(await call(alice, 'get', `sessions/${id}`), 400, INVALID_SESSION_ID);
      expectFail(await call(alice, 'delete', `sessions/${id}`), 400, INVALID_SESSION_ID);
      const links = (await t.dataSource.query(
        'SELECT COUNT(*) AS n FROM session_targets WHERE session_id = ?',
        [id],
      )) as Array<{ n: number | string }>;
      expect(Number(links[0].n)).toBe(0);
      expect((await call(alice, 'get', `targets/${target}`).expect(200)).body.data.id).toBe(target);
    });

    it('leaves no session active after deleting the active one, until one is activated', async () => {
      const user = await signUp(t, smtp, 'deleter');
      const first = await createSession(user, 'first');
      const second = await createSession(user, 'second');
      await call(user, 'delete', `sessions/${second}`).expect(200);
      expect(await list(user)).toEqual([{ id: first, name: 'first', active: false }]);
      await call(user, 'patch', `sessions/${first}/activate`).expect(200);
      expect(await activeIds(user)).toEqual([first]);
    });
  });

  describe('ownership', () => {
    it('hides other users’ sessions: their ids answer exactly like unknown ones', async () => {
      const mine = await createSession(alice, 'alice-private');
      const target = await createTarget(alice, 'http://alice-private.example/');
      await call(alice, 'patch', `sessions/${mine}/add`).send({ target_id: target }).expect(200);
      const aliceBefore = await getSession(alice, mine);
      const missing = await unknownId();

      expect((await list(bob)).map((session) => session.id)).not.toContain(mine);
      for (const [method, suffix, body] of [
        ['get', '', {}],
        ['delete', '', {}],
        ['patch', '/activate', {}],
        ['patch', '/add', { target_id: target }],
        ['patch', '/remove', { target_id: target }],
      ] as Array<[Method, string, object]>) {
        const foreign = await call(bob, method, `sessions/${mine}${suffix}`).send(body);
        const unknown = await call(bob, method, `sessions/${missing}${suffix}`).send(body);
        expect([method, suffix, foreign.status, foreign.body]).toEqual([
          method,
          suffix,
          unknown.status,
          unknown.body,
        ]);
        expect(foreign.status).toBe(400);
      }
      expect(await getSession(alice, mine)).toEqual(aliceBefore);
    });

    it('gives admins their own sessions only: no cross-user listing or access', async () => {
      const admin = await signUpAdmin(t, smtp, ADMIN_EMAIL, 'sadmin');
      const alices = await createSession(alice, 'not-for-admins');
      const own = await createSession(admin, 'admin-own');
      expect(await list(admin)).toEqual([{ id: own, name: 'admin-own', active: true }]);
      expectFail(await call(admin, 'get', `sessions/${alices}`), 400, INVALID_SESSION_ID);
      expectFail(await call(admin, 'patch', `sessions/${alices}/activate`), 400, INVALID_PARAMETER_TYPE);
      expectFail(await call(admin, 'delete', `sessions/${alices}`), 400, INVALID_SESSION_ID);
      expect((await getSession(alice, alices)).data.name).toBe('not-for-admins');
    });

    it('refuses another user’s target as an unknown one', async () => {
      const bobs = await createSession(bob, 'bob-session');
      const alicesTarget = await createTarget(alice, 'http://not-bobs.example/');
      expectFail(
        await call(bob, 'patch', `sessions/${bobs}/add`).send({ target_id: alicesTarget }),
        400,
        INVALID_TARGET,
      );
      expect((await getSession(bob, bobs)).data.targets).toEqual([]);
    });

    it('lets two users use the same name, and activation of one leaves the other’s active session alone', async () => {
      const carol = await signUp(t, smtp, 'carol');
      const dave = await signUp(t, smtp, 'dave');
      const carols = await createSession(carol, 'same name');
      const daves = await createSession(dave, 'same name');
      const carolsOther = await createSession(carol, 'other');
      await call(carol, 'patch', `sessions/${carols}/activate`).expect(200);
      expect(await activeIds(carol)).toEqual([carols]);
      expect(await activeIds(dave)).toEqual([daves]);
      expect(carolsOther).not.toBe(daves);
    });

    it('keeps exactly one session active when one user creates and activates sessions concurrently', async () => {
      const racer = await signUp(t, smtp, 'racer');
      const created = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          call(racer, 'post', 'sessions/').send({ name: `race-${index}` }),
        ),
      );
      expect(created.map((response) => response.status)).toEqual(Array(8).fill(201));
      const ids = (await list(racer)).map((session) => session.id);
      const activated = await Promise.all(ids.map((id) => call(racer, 'patch', `sessions/${id}/activate`)));
      expect(activated.map((response) => response.status)).toEqual(Array(8).fill(200));
      expect(await activeIds(racer)).toHaveLength(1);
    });

    it('keeps at most one active session per user in the database', async () => {
      const rows = (await t.dataSource.query(
        'SELECT user_id, COUNT(*) AS n FROM sessions WHERE active = 1 GROUP BY user_id',
      )) as Array<{ n: number | string }>;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((row) => Number(row.n) !== 1)).toEqual([]);
    });
  });

  describe('authentication and methods', () => {
    it('needs a token for every session endpoint', async () => {
      for (const [method, path] of [
        ['get', 'sessions/'],
        ['get', 'sessions/1'],
        ['post', 'sessions/'],
        ['patch', 'sessions/1/activate'],
        ['delete', 'sessions/1'],
      ] as Array<[Method, string]>) {
        const response = await call(null, method, path).send({ name: 'x' });
        expect([method, path, response.status, response.body]).toEqual([
          method,
          path,
          401,
          fail('Unauthorized'),
        ]);
      }
      expect((await call(null, 'get', 'sessions/').set('Authorization', 'Bearer garbage')).status).toBe(401);
    });

    it('answers an unsupported method with 405 in the fail envelope and an Allow header', async () => {
      for (const path of ['sessions', 'sessions/', 'sessions/1', 'sessions/1/add']) {
        for (const user of [alice, null]) {
          const response = await call(user, 'put', path).send({ name: 'x' });
          expect([path, response.status, response.body]).toEqual([path, 405, fail('Method not allowed')]);
          expect(response.headers['allow']).toBe('GET, POST, PATCH, DELETE, OPTIONS');
          expect(response.headers['content-type']).toMatch(/^application\/json/);
        }
      }
    });

    it('answers OPTIONS with 204 and the Allow header, without a token', async () => {
      for (const path of ['sessions', 'sessions/', 'sessions/1/add']) {
        const response = await call(null, 'options', path);
        expect([path, response.status, response.headers['allow'], response.text]).toEqual([
          path,
          204,
          'GET, POST, PATCH, DELETE, OPTIONS',
          '',
        ]);
      }
    });

    it('answers a path deeper than session id and action with 404 in the fail envelope', async () => {
      const response = await call(alice, 'get', 'sessions/1/add/extra');
      expect(response.status).toBe(404);
      expect(response.body.status).toBe('fail');
    });
  });
});
