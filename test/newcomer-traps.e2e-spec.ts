import { JSON_AS_FORM, UNSUPPORTED_BODY } from '../src/http/http-adapter';
import { activationKey, newUser, register, signUp } from './helpers/accounts';
import { accountFail, fail } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

/** What a newcomer trips over first: bodies the API cannot read, the token's header, methods, the way in. */
describe('a newcomer’s traps', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp });
    ({ token } = await signUp(t, smtp, 'newcomer'));
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  describe('a body the API cannot read is 415 naming the accepted types', () => {
    const json = JSON.stringify({ emailOrUsername: 'newcomer', password: 'Wr0ng!pass' });

    it.each([
      ['JSON sent as text/plain', 'text/plain', json],
      ['XML', 'application/xml', '<login><emailOrUsername>x</emailOrUsername></login>'],
    ])('%s, on a public and on an authenticated endpoint', async (_name, type, body) => {
      const login = await t.http().post('/api/v1/login/').set('Content-Type', type).send(body);
      // An account endpoint's envelope repeats itself under `data`, for the framework's web client.
      expect([login.status, login.body]).toEqual([415, accountFail(UNSUPPORTED_BODY)]);
      const target = await t
        .http()
        .post('/api/v1/targets/')
        .set('Authorization', `Bearer ${token}`)
        .set('Content-Type', type)
        .send(body);
      expect([target.status, target.body]).toEqual([415, fail(UNSUPPORTED_BODY)]);
      expect(UNSUPPORTED_BODY).toBe(
        'Unsupported Content-Type: send the body as application/json, application/x-www-form-urlencoded or multipart/form-data',
      );
    });

    it("JSON sent the way `curl -d '{...}'` sends it (urlencoded) says to send it as JSON", async () => {
      const answer = await t
        .http()
        .post('/api/v1/login/')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(json);
      expect([answer.status, answer.body]).toEqual([415, accountFail(JSON_AS_FORM)]);
      const target = await t
        .http()
        .post('/api/v1/targets/')
        .set('Authorization', `Bearer ${token}`)
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send('{"target_url":"https://example.com"}');
      expect([target.status, target.body]).toEqual([415, fail(JSON_AS_FORM)]);
    });

    it('a real form, JSON, and an empty body of any type are read as before', async () => {
      const form = await t
        .http()
        .post('/api/v1/login/')
        .type('form')
        .send('emailOrUsername=newcomer&password=Wr0ng%21pass');
      const asJson = await t.http().post('/api/v1/login/').set('Content-Type', 'application/json').send(json);
      for (const answer of [form, asJson]) {
        expect([answer.status, answer.body]).toEqual([200, accountFail('Invalid login credentials')]);
      }
      const empty = await t.http().post('/api/v1/login/').set('Content-Type', 'text/plain').send('');
      expect([empty.status, empty.body]).toEqual([200, accountFail('Missing email or username value')]);
    });
  });

  describe('the Authorization header', () => {
    const me = (authorization: string) =>
      t.http().get('/api/v1/community-plugins/me/').set('Authorization', authorization);

    it('takes the token as its second part, whatever the scheme word', async () => {
      for (const scheme of ['Bearer', 'bearer', 'JWT', 'Token']) {
        expect((await me(`${scheme} ${token}`)).status).toBe(200);
      }
    });

    it('a token without a scheme word is 401 naming the form', async () => {
      for (const header of [token, 'Bearer']) {
        const answer = await me(header);
        expect([answer.status, answer.body]).toEqual([
          401,
          fail('Authorization header must be "Bearer <token>"'),
        ]);
      }
      const threeParts = await me(`Bearer ${token} extra`);
      expect([threeParts.status, threeParts.body]).toEqual([401, fail('Unauthorized')]);
    });
  });

  describe('methods', () => {
    it.each([
      ['PUT', '/api/v1/login/', 'POST'],
      ['GET', '/api/v1/register/', 'POST'],
      ['DELETE', '/api/v1/health', 'GET, HEAD'],
      ['POST', '/api/v1/', 'GET, HEAD'],
    ])('%s %s is 405 with Allow: %s', async (method, path, allow) => {
      const answer = await t.http()[method.toLowerCase() as 'put' | 'get' | 'delete' | 'post'](path);
      expect([answer.status, answer.body, answer.headers.allow]).toEqual([
        405,
        fail('Method not allowed'),
        allow,
      ]);
    });

    it('an unknown path stays 404, with CORS on too (its preflight route matches every path)', async () => {
      expect((await t.http().put('/api/v1/no-such-thing/')).status).toBe(404);
      const withCors = await createTestApp({ env: { CORS_ORIGINS: 'https://app.example.test' } });
      try {
        expect((await withCors.http().get('/api/v1/no-such-thing')).status).toBe(404);
        const wrong = await withCors.http().put('/api/v1/login/');
        expect([wrong.status, wrong.headers.allow]).toEqual([405, 'POST']);
      } finally {
        await withCors.close();
      }
    });

    it('GET /api/v1/ names the docs, as / does', async () => {
      const root = await t.http().get('/').set('Accept', 'application/json').expect(200);
      for (const path of ['/api/v1', '/api/v1/']) {
        const answer = await t.http().get(path).expect(200);
        expect(answer.body).toEqual(root.body);
      }
      expect(root.body).toMatchObject({ data: { documentation: '/api/docs' } });
    });
  });

  describe('the confirmed page says where to log in', () => {
    async function confirmedPage(app: TestApp, prefix: string): Promise<string> {
      const user = newUser(prefix);
      await register(app, user);
      await app.http().post('/api/v1/generate/confirm_email/').send({ email: user.email }).expect(200);
      const key = await activationKey(app, smtp, user.email);
      return (await app.http().post(`/email-verify/${key}`).type('form').send('').expect(200)).text;
    }

    it('without FRONTEND_URL: the API, its login endpoint and its docs', async () => {
      const page = await confirmedPage(t, 'nofrontend');
      expect(page).toContain('You can log in now, with the API: <code>POST /api/v1/login/</code>');
      expect(page).toContain('<a href="/api/docs">API documentation</a> shows how');
    });

    it('with FRONTEND_URL: a link to the web client', async () => {
      const withClient = await createTestApp({
        smtp,
        env: { FRONTEND_URL: 'https://owtf.example.test/app' },
      });
      try {
        const page = await confirmedPage(withClient, 'frontend');
        expect(page).toContain('You can <a href="https://owtf.example.test/app" id="log-in">log in now</a>.');
      } finally {
        await withClient.close();
      }
    });
  });
});
