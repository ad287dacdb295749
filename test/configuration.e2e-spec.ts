import { ConfigurationService } from '../src/configuration/configuration.service';
import { configurationDefaults } from '../src/configuration/configuration-defaults';
import { signUp, signUpAdmin, TestUser } from './helpers/accounts';
import { api, Method } from './helpers/client';
import { expectFail, fail, okData as ok } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

type Caller = TestUser & { token: string };
interface Item {
  dirty: boolean;
  key: string;
  descrip: string;
  section: string;
  value: string;
}
type Grouped = Record<string, Item[]>;

const ADMIN_EMAIL = 'config-admin@example.com';

/** The defaults file as GET shows it untouched: sections and keys in code-point order. */
function seededView(): Grouped {
  const grouped: Grouped = {};
  const items = [...configurationDefaults()].sort((left, right) =>
    left.section === right.section ? (left.key < right.key ? -1 : 1) : left.section < right.section ? -1 : 1,
  );
  for (const item of items) {
    (grouped[item.section] ??= []).push({ dirty: false, ...item });
  }
  return grouped;
}

describe('configuration', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let admin: Caller;
  let user: Caller;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: ADMIN_EMAIL } });
    admin = await signUpAdmin(t, smtp, ADMIN_EMAIL, 'cfgadmin');
    user = await signUp(t, smtp, 'cfguser');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const call = (caller: Caller | null, method: Method, path: string) => api(t, caller, method, path);
  const all = async (): Promise<Grouped> => (await call(user, 'get', 'configuration').expect(200)).body.data;
  const item = async (key: string): Promise<Item> =>
    Object.values(await all())
      .flat()
      .find((candidate) => candidate.key === key)!;
  /** Every row as stored, to prove that a refused PATCH changed nothing at all. */
  const snapshot = async () =>
    t.dataSource.query(
      'SELECT id, `key` AS k, value, section, descrip, dirty FROM configuration ORDER BY id',
    );
  const resetItems = async () => {
    for (const entry of configurationDefaults()) {
      await t.dataSource.query('UPDATE configuration SET value = ?, dirty = 0 WHERE `key` = ?', [
        entry.value,
        entry.key,
      ]);
    }
  };
  beforeEach(resetItems);

  describe('GET /api/v1/configuration', () => {
    it('lists the seeded defaults grouped by section, sections and keys in order, with or without the slash', async () => {
      const expected = seededView();
      expect(Object.keys(expected)).toEqual(['general', 'proxy', 'tools', 'wordlists']);
      const response = await call(user, 'get', 'configuration').expect(200);
      expect(response.body).toEqual(ok(expected));
      expect(Object.keys(response.body.data)).toEqual(['general', 'proxy', 'tools', 'wordlists']);
      expect(response.body.data.tools.map((entry: Item) => entry.key)).toEqual(
        [...response.body.data.tools.map((entry: Item) => entry.key)].sort(),
      );
      expect((await call(user, 'get', 'configuration/').expect(200)).body).toEqual(ok(expected));
    });

    it('seeds the paths of the external tools', async () => {
      const tools = (await all()).tools;
      for (const tool of [
        'nmap',
        'sqlmap',
        'nikto',
        'wapiti',
        'amass',
        'subfinder',
        'ffuf',
        'nuclei',
        'whatweb',
        'testssl',
      ]) {
        expect(tools.find((entry) => entry.key === `${tool}_path`)).toEqual({
          dirty: false,
          key: `${tool}_path`,
          descrip: expect.stringMatching(/\S/),
          section: 'tools',
          value: expect.stringMatching(/^\//),
        });
      }
    });

    it('filters by key, by any of several sections, by dirty, and ignores unknown arguments', async () => {
      await call(admin, 'patch', 'configuration/')
        .type('form')
        .send('proxy_port=3128&nmap_path=/opt/nmap')
        .expect(200);
      const keysOf = (data: Grouped) =>
        Object.fromEntries(
          Object.entries(data).map(([section, items]) => [section, items.map((entry) => entry.key)]),
        );
      const get = async (query: string) =>
        keysOf((await call(user, 'get', `configuration?${query}`).expect(200)).body.data);

      expect(await get('key=threads')).toEqual({ general: ['threads'] });
      expect(await get('key=threads&key=proxy_host')).toEqual({
        general: ['threads'],
        proxy: ['proxy_host'],
      });
      expect(await get('section=proxy')).toEqual({ proxy: seededView().proxy.map((entry) => entry.key) });
      expect(Object.keys(await get('section=wordlists&section=proxy'))).toEqual(['proxy', 'wordlists']);
      expect(await get('dirty=true')).toEqual({ proxy: ['proxy_port'], tools: ['nmap_path'] });
      expect(await get('dirty=TRUE&section=tools')).toEqual({ tools: ['nmap_path'] });
      expect((await get('dirty=false')).proxy).not.toContain('proxy_port');
      expect((await get('dirty=0')).tools).not.toContain('nmap_path');
      expect(await get('key=threads&section=proxy')).toEqual({});
      expect(await get('key=THREADS')).toEqual({});
      expect(await get('section=nothing')).toEqual({});
      expect(await get('colour=blue&page=2')).toEqual(keysOf(seededView()));
      const filtered = (await call(user, 'get', 'configuration/?key=proxy_port').expect(200)).body;
      expect(filtered).toEqual(
        ok({
          proxy: [
            {
              ...seededView().proxy.find((entry) => entry.key === 'proxy_port')!,
              value: '3128',
              dirty: true,
            },
          ],
        }),
      );
    });

    it('answers a malformed dirty with 400 Incorrect query parameters', async () => {
      const response = await call(user, 'get', 'configuration?dirty=maybe');
      expect([response.status, response.body]).toEqual([
        400,
        { ...fail('Incorrect query parameters'), errors: { dirty: 'must be true or false' } },
      ]);
    });

    it('needs a valid token', async () => {
      expectFail(await call(null, 'get', 'configuration'), 401, 'Unauthorized');
      expect((await call(null, 'head', 'configuration')).status).toBe(401);
      expect((await call(user, 'head', 'configuration/')).status).toBe(200);
      expectFail(
        await call(null, 'get', 'configuration/').set('Authorization', 'Bearer nope'),
        401,
        'Unauthorized',
      );
    });
  });

  describe('PATCH /api/v1/configuration/', () => {
    it('sets every supplied key from a form and marks it dirty, leaving the others alone', async () => {
      const before = await all();
      const response = await call(admin, 'patch', 'configuration/')
        .type('form')
        .send('nmap_path=%2Fopt%2Fnmap%2Fbin%2Fnmap&threads=20&proxy_host=');
      expect([response.status, response.body]).toEqual([200, ok(null)]);
      const after = await all();
      const changed = { nmap_path: '/opt/nmap/bin/nmap', threads: '20', proxy_host: '' } as Record<
        string,
        string
      >;
      for (const [section, items] of Object.entries(before)) {
        expect(after[section]).toEqual(
          items.map((entry) =>
            entry.key in changed ? { ...entry, value: changed[entry.key], dirty: true } : entry,
          ),
        );
      }
    });

    it('takes the first value given for a repeated key', async () => {
      await call(admin, 'patch', 'configuration')
        .type('form')
        .send('threads=7&threads=8&log_level=debug')
        .expect(200);
      expect(await item('threads')).toEqual(expect.objectContaining({ value: '7', dirty: true }));
      expect(await item('log_level')).toEqual(expect.objectContaining({ value: 'debug', dirty: true }));
    });

    it('accepts JSON, query arguments and multipart fields too', async () => {
      await call(admin, 'patch', 'configuration/').send({ threads: 12, follow_redirects: false }).expect(200);
      expect([(await item('threads')).value, (await item('follow_redirects')).value]).toEqual([
        '12',
        'false',
      ]);
      await call(admin, 'patch', 'configuration/?proxy_port=9050').expect(200);
      expect(await item('proxy_port')).toEqual(expect.objectContaining({ value: '9050', dirty: true }));
      await call(admin, 'patch', 'configuration/').field('proxy_type', 'socks5').expect(200);
      expect((await item('proxy_type')).value).toBe('socks5');
    });

    it('marks an item dirty even when the value stays the same', async () => {
      const current = await item('nikto_path');
      await call(admin, 'patch', 'configuration/')
        .type('form')
        .send(`nikto_path=${current.value}`)
        .expect(200);
      expect(await item('nikto_path')).toEqual({ ...current, dirty: true });
    });

    it('answers an unknown key among good ones with 422 and changes nothing at all', async () => {
      const before = await snapshot();
      for (const body of [
        'nmap_path=/evil&no_such_item=1&threads=99',
        'NMAP_PATH=/evil',
        'nmap_path=/evil&nmap_path[0]=x',
        'nmap_path=/evil&nmap_path%20=x',
      ]) {
        const response = await call(admin, 'patch', 'configuration/').type('form').send(body);
        expect([body, response.status, response.body]).toEqual([
          body,
          422,
          fail('Invalid configuration item specified'),
        ]);
      }
      expectFail(
        await call(admin, 'patch', 'configuration/?unknown=1').type('form').send('threads=1'),
        422,
        'Invalid configuration item specified',
      );
      expect(await snapshot()).toEqual(before);
    });

    it('answers an empty PATCH with 400 Incorrect query parameters', async () => {
      const before = await snapshot();
      expectFail(await call(admin, 'patch', 'configuration/'), 400, 'Incorrect query parameters');
      expectFail(
        await call(admin, 'patch', 'configuration').type('form').send(''),
        400,
        'Incorrect query parameters',
      );
      expectFail(await call(admin, 'patch', 'configuration/').send({}), 400, 'Incorrect query parameters');
      expect(await snapshot()).toEqual(before);
    });

    it('refuses values it cannot store, with the reason per key, and changes nothing', async () => {
      const before = await snapshot();
      const response = await call(admin, 'patch', 'configuration/').send({
        threads: '4',
        nmap_path: 'x'.repeat(1025),
        sqlmap_path: '/usr/bin/sqlmap\n--os-shell',
        proxy_host: { nested: true },
      });
      expect([response.status, response.body]).toEqual([
        400,
        {
          ...fail('Incorrect query parameters'),
          errors: {
            proxy_host: 'must be a text value',
            nmap_path: 'must be at most 1024 characters',
            sqlmap_path: 'must not contain control characters',
          },
        },
      ]);
      expect(await snapshot()).toEqual(before);
      await call(admin, 'patch', 'configuration/')
        .send({ nmap_path: 'é'.repeat(1024) })
        .expect(200);
      expect((await item('nmap_path')).value).toBe('é'.repeat(1024));
    });

    it('is an admin’s act: a user gets 403, no token gets 401, and nothing changes', async () => {
      const before = await snapshot();
      expectFail(
        await call(user, 'patch', 'configuration/').type('form').send('nmap_path=/tmp/evil'),
        403,
        'Admin privileges required',
      );
      expectFail(
        await call(null, 'patch', 'configuration/').type('form').send('nmap_path=/tmp/evil'),
        401,
        'Unauthorized',
      );
      expect(await snapshot()).toEqual(before);
    });

    it('lets an admin promoted in the database patch as well', async () => {
      const promoted = await signUp(t, smtp, 'cfgpromoted');
      await t.dataSource.query('UPDATE users SET is_admin = 1 WHERE name = ?', [promoted.username]);
      await call(promoted, 'patch', 'configuration/').type('form').send('threads=3').expect(200);
      expect((await item('threads')).value).toBe('3');
    });
  });

  describe('OPTIONS and other methods', () => {
    it('answers OPTIONS with 204 and Allow: GET, PATCH, OPTIONS, without a token', async () => {
      for (const path of ['configuration', 'configuration/']) {
        const response = await call(null, 'options', path);
        expect([path, response.status, response.headers['allow'], response.text]).toEqual([
          path,
          204,
          'GET, PATCH, OPTIONS',
          '',
        ]);
      }
    });

    it('answers other methods with 405, the Allow header and the fail envelope', async () => {
      for (const method of ['post', 'put', 'delete'] as const) {
        for (const caller of [admin, null]) {
          const response = await call(caller, method, 'configuration/').send({ threads: '1' });
          expect([method, response.status, response.body, response.headers['allow']]).toEqual([
            method,
            405,
            fail('Method not allowed'),
            'GET, PATCH, OPTIONS',
          ]);
        }
      }
    });
  });

  describe('seeding', () => {
    it('adds missing keys and never overwrites a value someone changed', async () => {
      const service = t.app.get(ConfigurationService);
      expect(await service.seed()).toBe(0);
      await call(admin, 'patch', 'configuration/').type('form').send('nuclei_path=/opt/nuclei').expect(200);
      await t.dataSource.query('UPDATE configuration SET value = ? WHERE `key` = ?', [
        '/custom/ffuf',
        'ffuf_path',
      ]);
      await t.dataSource.query('DELETE FROM configuration WHERE `key` IN (?, ?)', [
        'testssl_path',
        'proxy_dns',
      ]);

      expect(await service.seed()).toBe(2);
      expect(await service.seed()).toBe(0);
      const view = seededView();
      const expectedFor = (key: string) =>
        Object.values(view)
          .flat()
          .find((entry) => entry.key === key);
      expect(await item('testssl_path')).toEqual(expectedFor('testssl_path'));
      expect(await item('proxy_dns')).toEqual(expectedFor('proxy_dns'));
      expect(await item('nuclei_path')).toEqual({
        ...expectedFor('nuclei_path'),
        value: '/opt/nuclei',
        dirty: true,
      });
      expect((await item('ffuf_path')).value).toBe('/custom/ffuf');
      const [count] = (await t.dataSource.query('SELECT COUNT(*) AS n FROM configuration')) as Array<{
        n: unknown;
      }>;
      expect(Number(count.n)).toBe(configurationDefaults().length);
    });

    it('adds keys new in a later release without touching the old ones', async () => {
      const service = t.app.get(ConfigurationService);
      const before = await snapshot();
      const newer = [
        ...configurationDefaults(),
        { key: 'zap_path', value: '/usr/bin/zaproxy', section: 'tools', descrip: 'Path of OWASP ZAP' },
      ];
      try {
        expect(await service.seed(newer)).toBe(1);
        expect(await item('zap_path')).toEqual({
          dirty: false,
          key: 'zap_path',
          value: '/usr/bin/zaproxy',
          section: 'tools',
          descrip: 'Path of OWASP ZAP',
        });
        expect((await snapshot()).slice(0, before.length)).toEqual(before);
      } finally {
        await t.dataSource.query('DELETE FROM configuration WHERE `key` = ?', ['zap_path']);
      }
    });
  });
});
