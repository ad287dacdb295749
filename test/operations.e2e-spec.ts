import { rmSync, writeFileSync } from 'node:fs';
import { signUpAs, upload } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';
import { helmetHeaders } from '../src/http/security-headers';
import { accountFail } from './helpers/envelopes';

describe('health, request ids, security headers', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { CORS_ORIGINS: 'https://app.example.com' } });
  });
  afterAll(() => t.close());

  it('answers liveness without a token', async () => {
    expect((await t.http().get('/api/v1/health').expect(200)).body).toEqual({
      status: 'success',
      data: { status: 'ok' },
    });
  });

  it('answers readiness with the start-up work, the database, the migrations, the plugin directory and not stopping', async () => {
    const response = await t.http().get('/api/v1/health/ready').expect(200);
    expect(response.body.status).toBe('success');
    expect(response.body.data.status).toBe('ok');
    expect(Object.keys(response.body.data.details).sort()).toEqual([
      'database',
      'migrations',
      'plugin_directory',
      'shutdown',
      'startup',
    ]);
  });

  it('answers 503 Service unavailable when a check fails, naming only which one', async () => {
    rmSync(t.config.communityPluginDir, { recursive: true, force: true });
    // A file where the directory should be: neither creatable nor writable as a directory.
    writeFileSync(t.config.communityPluginDir, 'not a directory');
    try {
      const response = await t.http().get('/api/v1/health/ready');
      expect(response.status).toBe(503);
      expect(response.body).toEqual({
        status: 'fail',
        message: 'Service unavailable',
        errors: { shutdown: 'up', startup: 'up', database: 'up', migrations: 'up', plugin_directory: 'down' },
      });
    } finally {
      rmSync(t.config.communityPluginDir, { force: true });
    }
  });

  it('returns the request id it was given, or makes one', async () => {
    const given = await t.http().get('/api/v1/health').set('X-Request-Id', 'trace-42');
    expect(given.headers['x-request-id']).toBe('trace-42');
    const made = await t.http().get('/api/v1/health');
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const forged = await t.http().get('/api/v1/health').set('X-Request-Id', 'a b\tc');
    expect(forged.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends security headers and no X-Powered-By', async () => {
    const response = await t.http().get('/api/v1/health');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(response.headers['content-security-policy']).toContain("default-src 'self'");
    // Plain HTTP is the default: asking browsers to upgrade would break the Swagger UI.
    expect(response.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(response.headers['x-powered-by']).toBeUndefined();
  });

  it("sends helmet's whole header set on every kind of answer", async () => {
    const expected = helmetHeaders();
    expect(Object.keys(expected)).toEqual(
      expect.arrayContaining(['strict-transport-security', 'referrer-policy', 'cross-origin-opener-policy']),
    );
    const answers = await Promise.all([
      t.http().get('/api/v1/health'),
      t.http().get('/api/v1/sessions/'),
      t.http().get('/api/v1/no-such-route'),
      t.http().post('/api/v1/login/').set('Content-Type', 'application/json').send('{bad'),
      t.http().get('/api/docs'),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 404, 400, 200]);
    for (const answer of answers) expect(answer.headers).toMatchObject(expected);
  });

  it('allows only the configured CORS origins', async () => {
    const allowed = await t.http().get('/api/v1/health').set('Origin', 'https://app.example.com');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const other = await t.http().get('/api/v1/health').set('Origin', 'https://evil.example.com');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses a body over the limit with 413', async () => {
    const response = await t
      .http()
      .post('/api/v1/login/')
      .send({ emailOrUsername: 'x', password: 'p'.repeat(200 * 1024) });
    expect(response.status).toBe(413);
    // An account endpoint: its refusals repeat themselves under `data`.
    expect(response.body).toEqual(accountFail('Request body too large'));
  });
});

describe('CORS by default', () => {
  it('is off', async () => {
    const t = await createTestApp();
    try {
      const response = await t.http().get('/api/v1/health').set('Origin', 'https://app.example.com');
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});

describe('Cache-Control', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'boss@example.com' } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('is no-store on every answer that carries a token, source code or personal data, and on failures', async () => {
    const boss = await signUpAs(t, smtp, 'boss');
    const created = await upload(t, boss.token).expect(201);
    const id = (created.body as { data: { id: number } }).data.id;
    const auth = { Authorization: `Bearer ${boss.token}` };
    const answers = [
      created,
      await t.http().post('/api/v1/login/').send({ emailOrUsername: boss.email, password: boss.password }),
      await t.http().get('/api/v1/community-plugins/me/').set(auth),
      await t.http().get('/api/v1/community-plugins/mine/').set(auth),
      await t.http().get(`/api/v1/community-plugins/${id}/source/`).set(auth),
      await t.http().get('/api/v1/sessions/').set(auth),
      await t.http().get('/api/v1/configuration').set(auth),
      await t.http().get('/api/v1/verify/confirm_email/00000000-0000-4000-8000-000000000000'),
      await t.http().get('/api/v1/sessions/'),
      await t.http().get('/api/v1/no-such-route'),
    ];
    expect(answers.map((answer) => answer.headers['cache-control'])).toEqual(answers.map(() => 'no-store'));
  });
});
