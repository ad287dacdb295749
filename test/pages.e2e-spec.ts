import { activationKey, login, newUser, register, type TestUser } from './helpers/accounts';
import { accountFail, okMessage } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

const HOUR_MS = 60 * 60 * 1000;
const UNKNOWN_KEY = '00000000-0000-4000-8000-000000000000';

/** The pages of src/pages over plain HTTP: status codes, types, headers, what they refuse. */
describe('pages', () => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { PORT: '9123', SERVER_ADDR: 'svc.example.test' } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  async function mailedKey(user: TestUser): Promise<string> {
    await t.http().post('/api/v1/generate/confirm_email/').send({ email: user.email }).expect(200);
    return activationKey(t, smtp, user.email);
  }

  /** Every page: HTML, helmet's CSP without 'unsafe-inline' scripts, no inline script at all. */
  function expectPage(response: { headers: Record<string, string>; text: string }): void {
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = response.headers['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.text).toMatch(/^<!DOCTYPE html>/);
    expect(response.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(response.text).toContain('href="/api/docs"');
  }

  describe('GET /', () => {
    it('names the documentation as JSON for API clients', async () => {
      const response = await t.http().get('/').set('Accept', '*/*').expect(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body).toEqual({
        status: 'success',
        data: {
          documentation: '/api/docs',
          openapi: '/api/docs-json',
          api: '/api/v1',
          password_reset: '/password-reset',
        },
      });
      expect(response.headers['vary']).toMatch(/Accept/);
    });

    it('is a short page for browsers', async () => {
      const response = await t.http().get('/').set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8');
      expect(response.status).toBe(200);
      expectPage(response);
      expect(response.text).toContain('/api/docs-json');
      await t.http().head('/').set('Accept', 'text/html').expect(200);
    });
  });

  it('serves the password reset page and its script and style', async () => {
    const page = await t.http().get('/password-reset').expect(200);
    expectPage(page);
    expect(page.text).toContain('action="/api/v1/generate/otp/"');
    expect(page.text).toContain('action="/api/v1/new-password/"');
    const script = await t.http().get('/pages/pages.js').expect(200);
    expect(script.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(script.text).toContain('addEventListener');
    const style = await t.http().get('/pages/pages.css').expect(200);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  describe('/email-verify/<key>', () => {
    it('links the mail to the API itself by default: FRONTEND_PORT follows PORT', async () => {
      const user = newUser('pagelink');
      await register(t, user);
      const key = await mailedKey(user);
      expect(smtp.lastTo(user.email)?.text).toContain(`http://svc.example.test:9123/email-verify/${key}`);
    });

    it('asks before it confirms: opening the link changes nothing, the button confirms once', async () => {
      const user = newUser('pageverify');
      await register(t, user);
      const key = await mailedKey(user);

      // What a mail scanner does with the link, twice: the key stays unused.
      for (let i = 0; i < 2; i += 1) {
        const opened = await t.http().get(`/email-verify/${key}`).expect(200);
        expectPage(opened);
        expect(opened.text).toContain('Confirm my email address');
        // The key is not written into the page: its form posts to the page's own address.
        expect(opened.text).not.toContain(key);
      }
      await t.http().head(`/email-verify/${key}`).expect(200);
      await expectLoginRefused(user);

      const confirmed = await t.http().post(`/email-verify/${key}`).type('form').send('').expect(200);
      expectPage(confirmed);
      expect(confirmed.text).toContain('Email address confirmed');
      expect(confirmed.text).not.toContain('no password yet');
      await login(t, user);

      const again = await t.http().post(`/email-verify/${key}`).expect(404);
      expectPage(again);
      expect(again.text).toContain('This link is not valid');
      // The API's own endpoint agrees: the key was used.
      expect((await t.http().get(`/api/v1/verify/confirm_email/${key}`).expect(200)).body).toEqual(
        okMessage('Invalid Link'),
      );
    });

    it('keeps the trailing slash and the case of the path as the API does', async () => {
      const user = newUser('pageslash');
      await register(t, user);
      const key = await mailedKey(user);
      await t.http().get(`/Email-Verify/${key}/`).expect(200);
      const confirmed = await t.http().post(`/email-verify/${key}/`).expect(200);
      expect(confirmed.text).toContain('Email address confirmed');
    });

    it('says an expired link expired, names the address (escaped) and offers a new link', async () => {
      const user = { ...newUser('pageexpired'), email: `o'neil&co${Date.now()}@example.com` };
      await register(t, user);
      const key = await mailedKey(user);
      t.clock.advance(HOUR_MS + 10_000);
      const expired = await t.http().post(`/email-verify/${key}`).expect(410);
      expectPage(expired);
      expect(expired.text).toContain('This link has expired');
      const escaped = user.email.replace('&', '&amp;').replace("'", '&#39;');
      expect(expired.text).toContain(`<strong>${escaped}</strong>`);
      expect(expired.text).toContain(`name="email" value="${escaped}"`);
      expect(expired.text).not.toContain(user.email);
      expect(expired.text).toContain('action="/api/v1/generate/confirm_email/"');
      await expectLoginRefused(user);
    });

    const malformed: Array<[string, string]> = [
      ['a key of other characters', '%3Cscript%3Ealert(1)%3C%2Fscript%3E'],
      ['a key with a slash', 'abc/def'],
      ['an over-long key', 'a'.repeat(65)],
      ['a key longer than the router takes', 'a'.repeat(3000)],
      ['no key', ''],
    ];

    it.each([['an unknown key', UNKNOWN_KEY], ...malformed])(
      'answers the button of %s with a clean page, not a 500',
      async (_, key) => {
        const response = await t.http().post(`/email-verify/${key}`);
        expect(response.status).toBe(404);
        expectPage(response);
        expect(response.text).toContain('This link is not valid');
        expect(response.text).toContain('action="/api/v1/generate/confirm_email/"');
        expect(response.text).not.toContain('<script>alert');
        expect(response.text).not.toContain('aaaaaaaaaa');
      },
    );

    it.each(malformed)('answers the link of %s at once with a clean page', async (_, key) => {
      const response = await t.http().get(`/email-verify/${key}`);
      expect(response.status).toBe(404);
      expectPage(response);
      expect(response.text).toContain('This link is not valid');
      expect(response.text).not.toContain('<script>alert');
      expect(response.text).not.toContain('aaaaaaaaaa');
    });
  });

  it('leaves the API as it was: JSON answers, its 404s and 405s', async () => {
    const missing = await t.http().get('/no-such-page').expect(404);
    expect(missing.headers['content-type']).toMatch(/^application\/json/);
    expect(missing.body).toMatchObject({ status: 'fail' });
    const unknownKey = await t.http().get(`/api/v1/verify/confirm_email/${UNKNOWN_KEY}`).expect(200);
    expect(unknownKey.body).toEqual(okMessage('Invalid Link'));
    expect(unknownKey.headers['cache-control']).toBe('no-store');
    await t.http().delete('/api/v1/configuration/').expect(405);
    // The index is a known path too: a method it lacks is 405, as on the API's paths.
    const wrongMethod = await t.http().delete('/').expect(405);
    expect(wrongMethod.headers.allow).toBe('GET, HEAD');
  });

  async function expectLoginRefused(user: TestUser): Promise<void> {
    const response = await t
      .http()
      .post('/api/v1/login/')
      .send({ emailOrUsername: user.username, password: user.password })
      .expect(200);
    expect(response.body).toEqual(accountFail('Your account is not active'));
  }
});

describe('pages: where the mail links', () => {
  const smtp = new SmtpSink();
  beforeAll(() => smtp.start());
  afterAll(() => smtp.stop());

  it.each([
    [{ PORT: '9123', FRONTEND_PORT: '8019' }, 'http://127.0.0.1:8019/email-verify/'],
    [{ FRONTEND_URL: 'https://svc.example.com/app/' }, 'https://svc.example.com/app/email-verify/'],
  ])('%j -> %s<key>', async (env, prefix) => {
    const t = await createTestApp({ smtp, env });
    try {
      const user = newUser('pagebase');
      await register(t, user);
      await t.http().post('/api/v1/generate/confirm_email/').send({ email: user.email }).expect(200);
      const key = await activationKey(t, smtp, user.email);
      expect(smtp.lastTo(user.email)?.text).toContain(`${prefix}${key}`);
    } finally {
      await t.close();
    }
  });
});
