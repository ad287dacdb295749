import { readFileSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { ApiHttpAdapter } from '../src/http/http-adapter';
import { MetricsListener } from '../src/metrics/metrics-listener';
import { login, newUser, registerAndActivate, signUp } from './helpers/accounts';
import { api } from './helpers/client';
import { fail } from './helpers/envelopes';
import { benignPlugin, upload, validFields } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, type TestApp } from './helpers/test-app';

const TOKEN = 'metrics-token-0123456789-abcdefghij';
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** A GET on the metrics listener, on a connection of its own. */
function scrapePort(
  t: TestApp,
  path = '/metrics',
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const address = t.app.get(MetricsListener).address!;
  return new Promise((resolve, reject) => {
    get({ host: address.address, port: address.port, path, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
    }).on('error', reject);
  });
}

/** The sample's value in a Prometheus text, 0 when the series is not there yet. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((each) => each.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/** Every label of every sample in a Prometheus text, as [name, value]. */
function labelValues(text: string): Array<[string, string]> {
  return [...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1], match[2]]);
}

const requests = (route: string, method: string, status: number) =>
  `svc_http_request_duration_seconds_count{route="${route}",method="${method}",status="${status}"}`;

describe('GET /metrics', () => {
  const smtp = new SmtpSink();
  beforeAll(() => smtp.start());
  afterAll(() => smtp.stop());

  describe('by default', () => {
    let t: TestApp;
    beforeAll(async () => (t = await createTestApp({ smtp })));
    afterAll(() => t.close());

    it('is an unknown route on the API listener, and there is no metrics listener', async () => {
      // As any path no route takes (`/no-such-route`: `Cannot GET /no-such-route`).
      expect((await t.http().get('/metrics').expect(404)).body).toEqual(fail('Cannot GET /metrics'));
      // With the right-looking token too: nothing is there to ask for it.
      await t.http().get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(404);
      expect(t.app.get(MetricsListener).address).toBeNull();
    });
  });

  describe('with METRICS_TOKEN', () => {
    let t: TestApp;
    beforeAll(async () => (t = await createTestApp({ smtp, env: { METRICS_TOKEN: TOKEN } })));
    afterAll(() => t.close());

    it('answers 401 without the token or with a wrong one, letter for letter', async () => {
      for (const authorization of [
        undefined,
        `Bearer ${TOKEN}x`,
        `Bearer ${TOKEN.slice(0, -1)}`,
        TOKEN,
        `Basic ${TOKEN}`,
        'Bearer',
      ]) {
        const call = t.http().get('/metrics');
        const response = await (authorization === undefined
          ? call
          : call.set('Authorization', authorization));
        expect([response.status, response.body, response.headers['www-authenticate']]).toEqual([
          401,
          fail('Unauthorized'),
          'Bearer',
        ]);
      }
    });

    it('serves the Prometheus text to the bearer of the token', async () => {
      const response = await t.http().get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
      expect(response.headers['content-type']).toBe(PROMETHEUS_TEXT);
      expect(response.text).toContain('# TYPE svc_http_request_duration_seconds histogram');
      expect(response.text).toContain('# TYPE process_cpu_user_seconds_total counter');
    });

    it('counts requests by route template, method and status, and its own 401s', async () => {
      const scrape = async () =>
        (await t.http().get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200)).text;
      const user = await signUp(t, smtp, 'counted');
      const before = await scrape();
      for (let i = 0; i < 3; i++) await api(t, user, 'get', 'sessions/').expect(200);
      await api(t, null, 'get', 'sessions/').expect(401);
      await t.http().get('/metrics').expect(401);
      const after = await scrape();
      const moved = (series: string) => sample(after, series) - sample(before, series);
      expect(moved(requests('/api/v1/sessions', 'GET', 200))).toBe(3);
      expect(moved(requests('/api/v1/sessions', 'GET', 401))).toBe(1);
      expect(moved(requests('/metrics', 'GET', 401))).toBe(1);
      // The scrape before this one is counted once it has answered.
      expect(moved(requests('/metrics', 'GET', 200))).toBe(1);
    });
  });

  describe('with METRICS_PORT', () => {
    let t: TestApp;
    beforeAll(async () => (t = await createTestApp({ smtp, env: { METRICS_PORT: '0' } })));
    afterAll(() => t.close());

    it('serves them on a loopback listener of its own, and not on the API listener', async () => {
      expect(t.app.get(MetricsListener).address?.address).toBe('127.0.0.1');
      const response = await scrapePort(t);
      expect([response.status, response.headers['content-type']]).toEqual([200, PROMETHEUS_TEXT]);
      expect(response.text).toContain('# TYPE svc_queue_waiting gauge');
      expect((await t.http().get('/metrics').expect(404)).body).toEqual(fail('Cannot GET /metrics'));
    });

    it('answers nothing else there', async () => {
      expect((await scrapePort(t, '/')).status).toBe(404);
      expect((await scrapePort(t, '/api/v1/sessions/')).status).toBe(404);
    });

    it("shows every pool's and queue's gauges, the database's pool and the outbox", async () => {
      const { text } = await scrapePort(t);
      for (const queue of ['bcrypt', 'validator', 'diff', 'test-run']) {
        expect(text).toContain(`svc_queue_waiting{queue="${queue}"} 0`);
        expect(text).toContain(`svc_queue_running{queue="${queue}"} 0`);
      }
      expect(text).toMatch(/^svc_db_pool_connections\{state="busy"\} \d+$/m);
      expect(text).toMatch(/^svc_db_pool_connections\{state="idle"\} \d+$/m);
      expect(text).toMatch(/^svc_db_pool_waiting \d+$/m);
      expect(text).toMatch(/^svc_outbox_jobs \d+$/m);
      expect(text).toContain('# TYPE svc_db_query_deadline_exceeded_total counter');
      expect(text).toContain('# TYPE svc_mail_failures_total counter');
      expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    });

    it("names only metrics the app exposes in deploy/'s Grafana dashboard", async () => {
      const { text } = await scrapePort(t);
      const dashboard = readFileSync(join(__dirname, '../deploy/grafana/svc-api-dashboard.json'), 'utf8');
      const named = new Set(dashboard.match(/\b(svc|process|nodejs)_\w+/g));
      expect(named.size).toBeGreaterThan(10);
      const exposed = (name: string) =>
        [name, name.replace(/_(bucket|count|sum)$/, '')].some((metric) => text.includes(`# HELP ${metric} `));
      expect([...named].filter((name) => !exposed(name))).toEqual([]);
    });

    it('times the bcrypt queue: every login waits its turn and is counted', async () => {
      const user = newUser('waited');
      await registerAndActivate(t, smtp, user);
      const before = sample((await scrapePort(t)).text, 'svc_queue_wait_seconds_count{queue="bcrypt"}');
      await Promise.all([login(t, user), login(t, user), login(t, user)]);
      const after = sample((await scrapePort(t)).text, 'svc_queue_wait_seconds_count{queue="bcrypt"}');
      expect(after - before).toBe(3);
    });
  });

  describe('with METRICS_PORT and METRICS_TOKEN', () => {
    let t: TestApp;
    beforeAll(
      async () => (t = await createTestApp({ smtp, env: { METRICS_PORT: '0', METRICS_TOKEN: TOKEN } })),
    );
    afterAll(() => t.close());

    it('asks for the token on both listeners', async () => {
      const refused = await scrapePort(t, '/metrics', { authorization: `Bearer ${TOKEN}0` });
      expect([refused.status, JSON.parse(refused.text)]).toEqual([401, fail('Unauthorized')]);
      expect((await scrapePort(t, '/metrics')).status).toBe(401);
      expect((await scrapePort(t, '/metrics', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      await t.http().get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    });
  });

  describe('labels', () => {
    let t: TestApp;
    beforeAll(
      async () =>
        (t = await createTestApp({
          smtp,
          env: { METRICS_PORT: '0', RATE_LIMIT: 'on', PLUGIN_UPLOADS_PER_HOUR: '1' },
        })),
    );
    afterAll(() => t.close());

    it('carry no user, address, plugin id or path: only route templates and fixed names', async () => {
      const user = await signUp(t, smtp, 'labelled');
      const pluginName = 'Labelled finder';
      const uploaded = await upload(t, user.token, { fields: validFields(pluginName), file: benignPlugin() });
      expect(uploaded.status).toBe(201);
      const pluginId = String((uploaded.body as { data: { id: number } }).data.id);
      // The second upload of the hour is refused by its rate limit.
      await upload(t, user.token, { fields: validFields('Second finder') }).expect(429);
      const ids = ['987654', '1234567'];
      for (const path of [
        `community-plugins/${pluginId}/`,
        `community-plugins/${ids[0]}/`,
        `sessions/${ids[1]}`,
        `users/${user.email}`,
        `community-plugins/${encodeURIComponent(user.username)}/`,
      ]) {
        await api(t, user, 'get', path);
      }
      await t.http().get(`/email-verify/${ids[0]}-${user.username}`);
      await t.http().get(`/${user.email}/${ids[1]}`);
      // Wrong passwords naming the user, from the test's address, until the address limit answers 429.
      let status = 200;
      for (let i = 0; i < 40 && status !== 429; i++) {
        status = (await t.http().post('/api/v1/login/').send({ emailOrUsername: user.email, password: 'x' }))
          .status;
      }
      expect(status).toBe(429);

      const { text } = await scrapePort(t);
      for (const secret of [
        user.email,
        user.username,
        pluginName,
        user.token,
        '127.0.0.1',
        ...ids,
        `/${pluginId}/`,
      ]) {
        expect(text).not.toContain(secret);
      }
      const served = (t.app.getHttpAdapter() as unknown as ApiHttpAdapter).servedRoutes.map(({ url }) => url);
      const allowed: Record<string, string[]> = {
        route: [...served, 'unmatched'],
        queue: ['bcrypt', 'validator', 'diff', 'test-run'],
        state: ['busy', 'idle'],
        // Outbox job kinds, and the process metrics' kinds of garbage collection.
        kind: ['mail', 'unknown', 'major', 'minor', 'incremental', 'weakcb'],
        limit: ['uploads', 'address', 'pair-failures', 'account-requests', 'otp-pair-requests'],
        method: ['GET', 'POST', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      };
      const unexpected = labelValues(text).filter(
        ([name, value]) => name in allowed && !allowed[name].includes(value),
      );
      expect(unexpected).toEqual([]);
      const routes = labelValues(text)
        .filter(([name]) => name === 'route')
        .map(([, value]) => value);
      expect(routes).toContain('/api/v1/community-plugins/:id');
      expect(routes).toContain('unmatched');
      expect(sample(text, 'svc_rate_limit_refusals_total{limit="uploads"}')).toBe(1);
      expect(sample(text, 'svc_rate_limit_refusals_total{limit="pair-failures"}')).toBe(1);
      expect(sample(text, 'svc_queue_wait_seconds_count{queue="validator"}')).toBe(1);
    });
  });
});
