import { signUp, TestUser } from './helpers/accounts';
import { api, Method } from './helpers/client';
import { expectFail, fail, okData as ok } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

type Caller = TestUser & { token: string };

interface TargetBody {
  id: number;
  target_url: string;
  url_scheme: string;
  host_name: string;
  port_number: number;
  host_path: string;
  scope: boolean;
  created_at: string;
  host_ip: null;
  max_user_rank: number;
  max_owtf_rank: number;
}

/** What the original client reads beyond the parsed URL: no resolution, no findings here. */
const UNRESOLVED = { host_ip: null, max_user_rank: -1, max_owtf_rank: -1 };

const LIMIT_RULE = 'must be an integer from 1 to 500, or -1 for all';

describe('targets', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: Caller;
  let bob: Caller;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp });
    alice = await signUp(t, smtp, 'talice');
    bob = await signUp(t, smtp, 'tbob');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  const call = (user: Caller | null, method: Method, path: string) => api(t, user, method, path);
  const create = async (user: Caller, targetUrl: string): Promise<TargetBody> => {
    const response = await call(user, 'post', 'targets/').send({ target_url: targetUrl });
    expect([targetUrl, response.status]).toEqual([targetUrl, 201]);
    return response.body.data as TargetBody;
  };
  /** The list of the caller's active session, and its count over all pages from X-Total-Count. */
  const page = async (user: Caller, query = '') => {
    const response = await call(user, 'get', `targets/?${query}`).expect(200);
    expect(Array.isArray(response.body.data)).toBe(true);
    return { total: Number(response.headers['x-total-count']), targets: response.body.data as TargetBody[] };
  };

  describe('POST /api/v1/targets/', () => {
    it('creates a target with HTTP 201 and returns it, parsed from the URL', async () => {
      t.clock.advance(3_600_000);
      const before = t.clock.now().getTime();
      const response = await call(alice, 'post', 'targets/').send({
        target_url: 'https://shop.example.com/cart?id=7',
      });
      const after = t.clock.now().getTime();
      expect(response.status).toBe(201);
      expect(response.body).toEqual(
        ok({
          id: expect.any(Number),
          target_url: 'https://shop.example.com/cart?id=7',
          url_scheme: 'https',
          host_name: 'shop.example.com',
          port_number: 443,
          host_path: '/cart?id=7',
          scope: true,
          created_at: expect.any(String),
          ...UNRESOLVED,
        }),
      );
      const createdAt = Date.parse(response.body.data.created_at);
      expect(createdAt).toBeGreaterThanOrEqual(before);
      expect(createdAt).toBeLessThanOrEqual(after);
      expect((await call(alice, 'get', `targets/${response.body.data.id}`).expect(200)).body).toEqual(
        response.body,
      );
    });

    it.each([
      ['http://example.org', 'http://example.org/', 'http', 'example.org', 80, '/'],
      ['https://example.org', 'https://example.org/', 'https', 'example.org', 443, '/'],
      [
        'http://example.org:8080/admin/',
        'http://example.org:8080/admin/',
        'http',
        'example.org',
        8080,
        '/admin/',
      ],
      [
        'https://example.org:8443/a/b?x=1&y=2',
        'https://example.org:8443/a/b?x=1&y=2',
        'https',
        'example.org',
        8443,
        '/a/b?x=1&y=2',
      ],
      ['http://example.net:443/', 'http://example.net:443/', 'http', 'example.net', 443, '/'],
      ['https://example.net:80/', 'https://example.net:80/', 'https', 'example.net', 80, '/'],
      [
        'HTTP://WWW.Example.EDU:80/Path#section',
        'http://www.example.edu/Path',
        'http',
        'www.example.edu',
        80,
        '/Path',
      ],
      ['http://[::1]:8080/x', 'http://[::1]:8080/x', 'http', '::1', 8080, '/x'],
      [
        'https://[2001:DB8::0:1]/api?v=2',
        'https://[2001:db8::1]/api?v=2',
        'https',
        '2001:db8::1',
        443,
        '/api?v=2',
      ],
      ['http://192.168.1.10:3000', 'http://192.168.1.10:3000/', 'http', '192.168.1.10', 3000, '/'],
      [
        'https://bücher.example/',
        'https://xn--bcher-kva.example/',
        'https',
        'xn--bcher-kva.example',
        443,
        '/',
      ],
      ['http://intranet/a b', 'http://intranet/a%20b', 'http', 'intranet', 80, '/a%20b'],
    ])('parses %s', async (raw, targetUrl, scheme, host, port, path) => {
      const user = await signUp(t, smtp, 'parse');
      const target = await create(user, raw);
      expect([
        target.target_url,
        target.url_scheme,
        target.host_name,
        target.port_number,
        target.host_path,
      ]).toEqual([targetUrl, scheme, host, port, path]);
    });

    it('takes target_url from a form, a query or a multipart body, and an optional scope', async () => {
      const form = await call(alice, 'post', 'targets')
        .type('form')
        .send('target_url=http://form.example/&scope=false');
      expect([form.status, form.body.data.target_url, form.body.data.scope]).toEqual([
        201,
        'http://form.example/',
        false,
      ]);
      const query = await call(alice, 'post', 'targets/?target_url=http%3A%2F%2Fquery.example%2F');
      expect([query.status, query.body.data.target_url, query.body.data.scope]).toEqual([
        201,
        'http://query.example/',
        true,
      ]);
      const multipart = await call(alice, 'post', 'targets/').field(
        'target_url',
        'http://multipart.example/',
      );
      expect([multipart.status, multipart.body.data.host_name]).toEqual([201, 'multipart.example']);
      const json = await call(alice, 'post', 'targets/').send({
        target_url: 'http://json.example/',
        scope: true,
      });
      expect([json.status, json.body.data.scope]).toEqual([201, true]);
      const badScope = await call(alice, 'post', 'targets/').send({
        target_url: 'http://scope.example/',
        scope: 'maybe',
      });
      expect([badScope.status, badScope.body]).toEqual([
        400,
        { ...fail('Incorrect query parameters'), errors: { scope: 'must be true or false' } },
      ]);
    });

    it.each([
      ['no target_url', {}],
      ['an empty target_url', { target_url: '' }],
      ['a host without scheme', { target_url: 'example.com' }],
      ['a relative path', { target_url: '/admin' }],
      ['a scheme-relative URL', { target_url: '//example.com/' }],
      ['an ftp URL', { target_url: 'ftp://example.com/' }],
      ['a file URL', { target_url: 'file:///etc/passwd' }],
      ['a javascript URL', { target_url: 'javascript:alert(1)' }],
      ['a URL without host', { target_url: 'http://' }],
      ['a sloppy http:host', { target_url: 'http:example.com' }],
      ['a space in the host', { target_url: 'http://exa mple.com/' }],
      ['a broken IPv6 host', { target_url: 'http://[::1/' }],
      ['a port out of range', { target_url: 'http://example.com:70000/' }],
      ['credentials', { target_url: 'http://admin:secret@example.com/' }],
      ['a line break', { target_url: 'http://example.com/\nx' }],
      ['2049 characters', { target_url: 'http://example.com/' + 'a'.repeat(2049 - 19) }],
      [
        'a 258-character host name',
        { target_url: `http://${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com/` },
      ],
      [
        'a 254-character host name',
        { target_url: `http://${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com/` },
      ],
      ['a 64-character host label', { target_url: `http://${'a'.repeat(64)}.example/` }],
      [
        'an IDN host over 253 characters as punycode',
        {
          target_url: `http://${'é'.repeat(55)}.${'ü'.repeat(55)}.${'ö'.repeat(55)}.${'ä'.repeat(55)}.example/`,
        },
      ],
      [
        'a URL that is too long once normalised',
        { target_url: 'http://example.com/' + ' '.repeat(700) + 'x' },
      ],
    ])('answers %s with 400 Invalid target URL', async (_, body) => {
      const before = await page(alice);
      expectFail(await call(alice, 'post', 'targets/').send(body), 400, 'Invalid target URL');
      expect((await page(alice)).total).toBe(before.total);
    });

    it('accepts a host name of 253 characters with labels of 63, with or without the final dot', async () => {
      const host = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
      expect(host.length).toBe(253);
      expect((await create(alice, `http://${host}/`)).host_name).toBe(host);
      expect((await create(alice, `http://${host}./`)).host_name).toBe(`${host}.`);
    });

    it('accepts a URL of exactly 2048 characters', async () => {
      const url = 'http://long.example/' + 'a'.repeat(2048 - 20);
      expect(url.length).toBe(2048);
      expect((await create(alice, url)).target_url).toBe(url);
    });

    it('answers a URL already in the active session, in any spelling, with 409 Target already exists', async () => {
      await create(alice, 'http://dup.example/');
      for (const spelling of [
        'http://dup.example/',
        'http://DUP.example',
        'http://dup.example:80/',
        'http://dup.example/#top',
      ]) {
        expectFail(
          await call(alice, 'post', 'targets/').send({ target_url: spelling }),
          409,
          'Target already exists',
        );
      }
      expect((await page(alice, 'target_url=http://dup.example/')).total).toBe(1);
      // The same URL is another user's own target.
      expect((await create(bob, 'http://dup.example/')).target_url).toBe('http://dup.example/');
    });
  });

  describe('GET /api/v1/targets/', () => {
    let owner: Caller;
    const ids: Record<string, number> = {};
    const urls = [
      'http://alpha.example/login',
      'https://alpha.example/admin?x=1',
      'http://beta.example:8080/',
      'http://[::1]:8080/x',
      'http://weird.example/100%25_done',
      'http://weird.example/100x_done',
    ];

    beforeAll(async () => {
      owner = await signUp(t, smtp, 'lister');
      for (const url of urls) ids[url] = (await create(owner, url)).id;
    });

    const listed = (data: { targets: TargetBody[] }) => data.targets.map((target) => target.id);

    it('lists the active session’s targets by id, all of them by default, the count in X-Total-Count', async () => {
      const response = await call(owner, 'get', 'targets/').expect(200);
      expect(response.body).toEqual(ok(expect.any(Array)));
      expect(response.headers['x-total-count']).toBe('6');
      const data = { targets: response.body.data as TargetBody[] };
      expect(listed(data)).toEqual(urls.map((url) => ids[url]));
      expect(data.targets[0]).toEqual({
        id: ids[urls[0]],
        target_url: 'http://alpha.example/login',
        url_scheme: 'http',
        host_name: 'alpha.example',
        port_number: 80,
        host_path: '/login',
        scope: true,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        ...UNRESOLVED,
      });
      expect((await call(owner, 'get', 'targets').expect(200)).body).toEqual(response.body);
      expect(await page(owner, 'limit=-1')).toEqual({ total: 6, targets: data.targets });
    });

    it('filters by target_url in normal form', async () => {
      expect(
        listed(await page(owner, 'target_url=' + encodeURIComponent('HTTP://Alpha.example:80/login'))),
      ).toEqual([ids[urls[0]]]);
      expect((await page(owner, 'target_url=' + encodeURIComponent('http://alpha.example/'))).total).toBe(0);
      expect((await page(owner, 'target_url=not-a-url')).total).toBe(0);
    });

    it('filters by host_name, in any case, IPv6 with or without brackets', async () => {
      expect(listed(await page(owner, 'host_name=ALPHA.example'))).toEqual([ids[urls[0]], ids[urls[1]]]);
      expect(listed(await page(owner, 'host_name=' + encodeURIComponent('[::1]')))).toEqual([ids[urls[3]]]);
      expect(listed(await page(owner, 'host_name=' + encodeURIComponent('::1')))).toEqual([ids[urls[3]]]);
      expect((await page(owner, 'host_name=alpha')).total).toBe(0);
    });

    it('searches a substring of target_url, wildcards taken literally', async () => {
      expect(listed(await page(owner, 'search=admin'))).toEqual([ids[urls[1]]]);
      expect(listed(await page(owner, 'search=ALPHA'))).toEqual([ids[urls[0]], ids[urls[1]]]);
      expect(listed(await page(owner, 'search=:8080'))).toEqual([ids[urls[2]], ids[urls[3]]]);
      expect(listed(await page(owner, 'search=' + encodeURIComponent('%25_')))).toEqual([ids[urls[4]]]);
      expect(listed(await page(owner, 'search=_done'))).toEqual([ids[urls[4]], ids[urls[5]]]);
      expect(listed(await page(owner, 'search=' + encodeURIComponent('%')))).toEqual([ids[urls[4]]]);
      expect(listed(await page(owner, 'search=!'))).toEqual([]);
      expect(listed(await page(owner, 'search=example&host_name=beta.example'))).toEqual([ids[urls[2]]]);
    });

    it('pages with limit and offset; X-Total-Count counts every match', async () => {
      expect(await page(owner, 'limit=2&offset=1')).toEqual({
        total: 6,
        targets: [
          expect.objectContaining({ id: ids[urls[1]] }),
          expect.objectContaining({ id: ids[urls[2]] }),
        ],
      });
      expect(await page(owner, 'limit=500&offset=6')).toEqual({ total: 6, targets: [] });
      expect(listed(await page(owner, 'offset=4'))).toEqual([ids[urls[4]], ids[urls[5]]]);
      expect(await page(owner, 'search=alpha&limit=1&offset=1')).toEqual({
        total: 2,
        targets: [expect.objectContaining({ id: ids[urls[1]] })],
      });
    });

    it.each([
      ['limit=501', { limit: LIMIT_RULE }],
      ['limit=0', { limit: LIMIT_RULE }],
      ['limit=-2', { limit: LIMIT_RULE }],
      ['limit=ten', { limit: LIMIT_RULE }],
      ['limit=1.5', { limit: LIMIT_RULE }],
      ['offset=-1', { offset: 'must be an integer of at least 0' }],
      ['offset=x&limit=1000', { limit: LIMIT_RULE, offset: 'must be an integer of at least 0' }],
    ])('answers %s with 400 Incorrect query parameters and the reason', async (query, errors) => {
      const response = await call(owner, 'get', `targets/?${query}`);
      expect([response.status, response.body]).toEqual([
        400,
        { status: 'fail', message: 'Incorrect query parameters', errors },
      ]);
    });
  });

  describe('GET and DELETE /api/v1/targets/<id>', () => {
    it('answers an unknown, malformed or foreign id with 404 Target not found', async () => {
      const bobs = await create(bob, 'http://bobs-only.example/');
      for (const method of ['get', 'delete'] as const) {
        for (const id of [String(bobs.id + 100_000), 'abc', '0', '-1', '1.5', String(bobs.id)]) {
          const response = await call(alice, method, `targets/${id}`);
          expect([method, id, response.status, response.body]).toEqual([
            method,
            id,
            404,
            fail('Target not found'),
          ]);
        }
      }
      expect((await call(bob, 'get', `targets/${bobs.id}/`).expect(200)).body.data).toEqual(bobs);
    });

    it('deletes a target and detaches it from every session of the user', async () => {
      const target = await create(alice, 'http://detach.example/');
      const keep = await create(alice, 'http://keep.example/');
      const sessionIds: number[] = [];
      for (const name of ['detach-1', 'detach-2']) {
        await call(alice, 'post', 'sessions/').send({ name }).expect(201);
        const sessions = (await call(alice, 'get', 'sessions/').expect(200)).body.data as Array<{
          id: number;
          name: string;
        }>;
        const id = sessions.find((session) => session.name === name)!.id;
        sessionIds.push(id);
        for (const targetId of [target.id, keep.id]) {
          await call(alice, 'patch', `sessions/${id}/add`).send({ target_id: targetId }).expect(200);
        }
      }
      expect((await call(alice, 'delete', `targets/${target.id}`).expect(200)).body).toEqual(ok(null));
      expectFail(await call(alice, 'get', `targets/${target.id}`), 404, 'Target not found');
      for (const id of sessionIds) {
        expect((await call(alice, 'get', `sessions/${id}`).expect(200)).body.data.targets).toEqual([keep.id]);
      }
      const links = (await t.dataSource.query(
        'SELECT COUNT(*) AS n FROM session_targets WHERE target_id = ?',
        [target.id],
      )) as Array<{ n: number | string }>;
      expect(Number(links[0].n)).toBe(0);
      expectFail(await call(alice, 'delete', `targets/${target.id}/`), 404, 'Target not found');
    });

    it('leaves another user’s target alone when they try to delete it', async () => {
      const alices = await create(alice, 'http://alices-only.example/');
      expectFail(await call(bob, 'delete', `targets/${alices.id}`), 404, 'Target not found');
      expect((await call(alice, 'get', `targets/${alices.id}`).expect(200)).body.data).toEqual(alices);
    });
  });

  describe('ownership, authentication and methods', () => {
    it('lists only the caller’s targets', async () => {
      const carol = await signUp(t, smtp, 'tcarol');
      const mine = await create(carol, 'http://carol.example/');
      expect(await page(carol)).toEqual({ total: 1, targets: [mine] });
      expect((await page(alice, 'limit=500')).targets.map((target: TargetBody) => target.id)).not.toContain(
        mine.id,
      );
    });

    it('needs a token', async () => {
      for (const [method, path] of [
        ['get', 'targets/'],
        ['post', 'targets/'],
        ['get', 'targets/1'],
        ['delete', 'targets/1'],
      ] as Array<[Method, string]>) {
        const response = await call(null, method, path).send({ target_url: 'http://x.example/' });
        expect([method, path, response.status, response.body]).toEqual([
          method,
          path,
          401,
          fail('Unauthorized'),
        ]);
      }
    });

    it('answers unsupported methods with 405, the Allow header and the fail envelope', async () => {
      for (const [method, path, allow] of [
        ['put', 'targets/', 'GET, POST, OPTIONS'],
        ['patch', 'targets', 'GET, POST, OPTIONS'],
        ['delete', 'targets/', 'GET, POST, OPTIONS'],
        ['put', 'targets/1', 'GET, DELETE, OPTIONS'],
        ['patch', 'targets/1/', 'GET, DELETE, OPTIONS'],
        ['post', 'targets/1', 'GET, DELETE, OPTIONS'],
      ] as Array<[Method, string, string]>) {
        for (const user of [alice, null]) {
          const response = await call(user, method, path);
          expect([method, path, response.status, response.body, response.headers['allow']]).toEqual([
            method,
            path,
            405,
            fail('Method not allowed'),
            allow,
          ]);
        }
      }
    });

    it('answers OPTIONS with 204 and the Allow header, without a token', async () => {
      const collection = await call(null, 'options', 'targets/');
      expect([collection.status, collection.headers['allow']]).toEqual([204, 'GET, POST, OPTIONS']);
      const item = await call(null, 'options', 'targets/1');
      expect([item.status, item.headers['allow']]).toEqual([204, 'GET, DELETE, OPTIONS']);
    });
  });
});
