import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import {
  login,
  mailedOtp,
  newUser,
  register,
  registerAndActivate,
  setPasswordByOtp,
  type TestUser,
} from './helpers/accounts';
import { freePort } from './helpers/api-process';
import { chromiumLack, chromiumPath, describeNeeding } from './helpers/prerequisites';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

jest.setTimeout(120_000);

const HOUR_MS = 60 * 60 * 1000;
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The pages as a person uses them, in headless Chromium: the link of a real activation mail
 * (read from the SMTP sink), the password reset with the OTP of a real mail. The app listens
 * on a real port, and PORT names it, so the mail's link is the default one.
 */
describeNeeding(chromiumLack(), 'pages in a browser', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let base: string;
  let userDataDir: string;
  let browser: BrowserContext;
  let page: Page;
  /** Console errors (a CSP violation is one) and uncaught exceptions of the current page. */
  let problems: string[];
  let dialogs: string[];

  beforeAll(async () => {
    await smtp.start();
    const port = await freePort();
    t = await createTestApp({ smtp, env: { PORT: String(port) } });
    await t.app.listen(port, '127.0.0.1');
    base = `http://127.0.0.1:${port}`;
    userDataDir = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
    browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: chromiumPath()!,
      headless: true,
      args: CHROMIUM_ARGS,
    });
  });
  afterAll(async () => {
    await browser?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await t?.close();
    await smtp.stop();
  });

  beforeEach(async () => {
    problems = [];
    dialogs = [];
    page = await browser.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  });
  afterEach(async () => {
    await page.close();
    t.clock.reset();
  });

  /** The link of the newest activation mail to this address, as it is written in the mail. */
  async function mailedLink(user: TestUser): Promise<string> {
    const response = await fetch(`${base}/api/v1/generate/confirm_email/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email }),
    });
    expect(response.status).toBe(200);
    await t.deliverMail();
    const link = /http:\/\/\S+?\/email-verify\/[0-9a-f-]{36}/.exec(smtp.lastTo(user.email)?.text ?? '')?.[0];
    if (!link) throw new Error(`no activation link mailed to ${user.email}`);
    return link;
  }

  /**
   * What the page reported, less Chromium's note that the document itself came with a 404 or
   * 410: the pages answer an invalid or expired link with those statuses on purpose.
   */
  const reported = () =>
    problems.filter(
      (problem) =>
        !/^Failed to load resource: the server responded with a status of (404 \(Not Found\)|410 \(Gone\))$/.test(
          problem,
        ),
    );

  const heading = () => page.locator('h1').textContent();

  async function expectLogin(user: TestUser, password: string, expected: 'success' | 'fail'): Promise<void> {
    const response = await t
      .http()
      .post('/api/v1/login/')
      .send({ emailOrUsername: user.username, password })
      .expect(200);
    expect((response.body as { status: string }).status).toBe(expected);
  }

  it("secures an address from the mail's second link: the registered password is not kept", async () => {
    const user = newUser('browserclaim');
    await register(t, user);
    const key = /\/email-verify\/([0-9a-f-]{36})/.exec(await mailedLink(user))![1];
    const link = /http:\/\/\S+?\/email-claim\/[0-9a-f-]{36}/.exec(smtp.lastTo(user.email)?.text ?? '')?.[0];
    expect(link).toBe(`${base}/email-claim/${key}`);

    const opened = await page.goto(link!);
    expect(opened?.status()).toBe(200);
    expect(await heading()).toBe('Secure your email address');
    await page.getByRole('button', { name: 'I did not register: secure this address' }).click();
    await page.waitForSelector('h1:text("Email address confirmed: now set your password")');
    expect(await page.locator('main').textContent()).toContain('Your account has no password yet');
    expect(await page.locator('main a[href="/password-reset"]').count()).toBe(1);
    await expectLogin(user, user.password, 'fail');
    await setPasswordByOtp(t, smtp, user);
    await login(t, user);
    expect(reported()).toEqual([]);
  });

  it('confirms an email from the link of the mail, once', async () => {
    const user = newUser('browserverify');
    await register(t, user);
    const link = await mailedLink(user);
    expect(link.startsWith(`${base}/email-verify/`)).toBe(true);

    const opened = await page.goto(link);
    expect(opened?.status()).toBe(200);
    expect(await heading()).toBe('Confirm your email address');
    await expectLogin(user, user.password, 'fail');

    await page.getByRole('button', { name: 'Confirm my email address' }).click();
    await page.waitForSelector('h1:text("Email address confirmed")');
    expect(await page.locator('main').textContent()).toContain('your account is active');
    // The password chosen at registration is kept: the contract's sign-up, then log-in.
    expect(await page.locator('main').textContent()).not.toContain('no password yet');
    await expectLogin(user, user.password, 'success');

    // The same link again: used up.
    await page.goto(link);
    await page.getByRole('button', { name: 'Confirm my email address' }).click();
    await page.waitForSelector('h1:text("This link is not valid")');
    expect(reported()).toEqual([]);
  });

  it('says an expired link expired and sends a new one from the page', async () => {
    const user = newUser('browserexpired');
    await register(t, user);
    const expiredLink = await mailedLink(user);
    t.clock.advance(HOUR_MS + 10_000);

    await page.goto(expiredLink);
    await page.getByRole('button', { name: 'Confirm my email address' }).click();
    await page.waitForSelector('h1:text("This link has expired")');
    expect(await page.locator('main strong').textContent()).toBe(user.email);

    await page.getByRole('button', { name: 'Send me a new link' }).click();
    await page.waitForSelector('.result.success');
    expect(await page.locator('.result').textContent()).toContain('a new activation link is on its way');

    await t.deliverMail();
    const newLink = /http:\/\/\S+?\/email-verify\/[0-9a-f-]{36}/.exec(
      smtp.lastTo(user.email)?.text ?? '',
    )?.[0];
    expect(newLink).toBeDefined();
    expect(newLink).not.toBe(expiredLink);
    t.clock.reset();
    await page.goto(newLink!);
    await page.getByRole('button', { name: 'Confirm my email address' }).click();
    await page.waitForSelector('h1:text("Email address confirmed")');
    await setPasswordByOtp(t, smtp, user);
    await login(t, user);
    expect(reported()).toEqual([]);
  });

  it('answers the button of an unknown key in plain words', async () => {
    const response = await page.goto(`${base}/email-verify/00000000-0000-4000-8000-000000000000`);
    expect(response?.status()).toBe(200);
    await page.getByRole('button', { name: 'Confirm my email address' }).click();
    await page.waitForSelector('h1:text("This link is not valid")');
    // The page offers a new link; the API answers alike whether the address has an account.
    await page.getByLabel('Email address').fill('someone@example.com');
    await page.getByRole('button', { name: 'Send me a new link' }).click();
    await page.locator('.result.success').waitFor();
    expect(await page.locator('.result').textContent()).toContain('a new activation link is on its way');
    expect(reported()).toEqual([]);
  });

  it.each([
    ['markup', '%3Cimg%20src=x%20onerror=alert(1)%3E'],
    ['a script tag', '<script>alert(1)</script>'],
    ['a key of 3000 characters', 'a'.repeat(3000)],
  ])('answers a link with %s at once, in plain words and nothing else', async (_, key) => {
    const response = await page.goto(`${base}/email-verify/${key}`);
    expect(response?.status()).toBe(404);
    expect(await heading()).toBe('This link is not valid');
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('script:not([src])').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(reported()).toEqual([]);
  });

  it('resets a password with the OTP of the mail, then the new password logs in', async () => {
    const user = newUser('browserreset');
    await registerAndActivate(t, smtp, user);
    const newPassword = 'N3w!Passw0rd-browser';

    await page.goto(`${base}/`);
    await page.getByRole('link', { name: 'Reset it here' }).click();
    await page.waitForSelector('h1:text("Reset your password")');

    const request = page.locator('#request-otp');
    await request.getByLabel('Username or email address').fill(user.email);
    await request.getByRole('button', { name: 'Send me an OTP' }).click();
    await request.locator('.result.success').waitFor();
    expect(await request.locator('.result').textContent()).toContain('We have sent an OTP');
    const otp = await mailedOtp(t, smtp, user.email);

    const change = page.locator('#new-password');
    expect(await change.getByLabel('Username or email address').inputValue()).toBe(user.email);
    // A wrong OTP first: said in plain words, and the password stays.
    const wrong = otp === '000000' ? '111111' : '000000';
    await change.getByLabel('OTP from the mail').fill(wrong);
    await change.getByLabel('New password', { exact: true }).fill(newPassword);
    await change.getByLabel('New password again').fill(newPassword);
    await change.getByRole('button', { name: 'Change my password' }).click();
    await change.locator('.result.fail').waitFor();
    expect(await change.locator('.result').textContent()).toContain('This OTP is not right');

    // Two different entries never reach the API.
    await change.getByLabel('OTP from the mail').fill(otp);
    await change.getByLabel('New password', { exact: true }).fill(newPassword);
    await change.getByLabel('New password again').fill(`${newPassword}x`);
    await change.getByRole('button', { name: 'Change my password' }).click();
    expect(await change.locator('.result').textContent()).toBe('The two passwords are not the same.');

    await change.getByLabel('New password', { exact: true }).fill(newPassword);
    await change.getByLabel('New password again').fill(newPassword);
    await change.getByRole('button', { name: 'Change my password' }).click();
    await change.locator('.result.success').waitFor();
    expect(await change.locator('.result').textContent()).toContain('Your password is changed');

    await expectLogin(user, newPassword, 'success');
    await expectLogin(user, user.password, 'fail');
    expect(reported()).toEqual([]);
  });

  it('links the API documentation from the home page', async () => {
    await page.goto(`${base}/`);
    expect(await heading()).toBe('svc-api');
    await page.getByRole('link', { name: 'API documentation' }).first().click();
    await page.waitForURL(`${base}/api/docs`);
    await page.locator('.swagger-ui').first().waitFor();
    expect(reported()).toEqual([]);
  });

  it('would see a CSP violation: an inline script is refused and reported', async () => {
    await page.goto(`${base}/password-reset`);
    // Evaluated through the DevTools protocol, which CSP does not govern; the script it adds is.
    await page.evaluate(`{
      const script = document.createElement('script');
      script.textContent = 'document.title = "inline ran"';
      document.body.appendChild(script);
    }`);
    for (let i = 0; i < 50 && !problems.some((problem) => /Content Security Policy/.test(problem)); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(problems.join('\n')).toMatch(/Content Security Policy/);
    expect(await page.title()).not.toBe('inline ran');
  });
});
