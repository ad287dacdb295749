import { newUser, register } from './helpers/accounts';
import { okMessage } from './helpers/envelopes';
import { createTestApp, TestApp } from './helpers/test-app';

/** Without SMTP_HOST the text of each mail goes to stdout (and the log) so the operator can act on it. */
describe('mail without SMTP_HOST', () => {
  let t: TestApp;
  let printed: string[];

  beforeAll(async () => {
    t = await createTestApp({ env: { SERVER_ADDR: '10.1.2.3', FRONTEND_PORT: '9000' } });
  });
  afterAll(() => t.close());
  beforeEach(() => {
    printed = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
  });
  afterEach(() => jest.restoreAllMocks());

  it('prints the activation mail as text, tags stripped, with a link that works', async () => {
    const user = newUser('nosmtp');
    await register(t, user);
    const response = await t.http().post('/api/v1/generate/confirm_email/').send({ email: user.email });
    expect(response.body).toEqual(okMessage('Email send successful'));
    await t.deliverMail();
    const block = printed.join('');
    expect(block).toContain(`mail to ${user.email}`);
    expect(block).toContain('Subject: Account Activation');
    // No username in a mail to an unconfirmed address.
    expect(block).toContain('Hello,\n');
    expect(block).not.toMatch(/<\/?(p|a|b)\b/);
    const key = /http:\/\/10\.1\.2\.3:9000\/email-verify\/([0-9a-f-]{36})/.exec(block)?.[1];
    expect(key).toBeDefined();
    expect((await t.http().get(`/api/v1/verify/confirm_email/${key}`)).body).toEqual(
      okMessage('Email Verified'),
    );
  });

  it('prints the OTP mail, and the printed OTP verifies', async () => {
    const user = newUser('nosmtpotp');
    await register(t, user);
    expect(
      (await t.http().post('/api/v1/generate/otp/').send({ emailOrUsername: user.username })).body,
    ).toEqual(okMessage('Otp Send Successful'));
    await t.deliverMail();
    const block = printed.join('');
    expect(block).toContain('Subject: OTP for Password Change');
    expect(block).toContain('expires in 5 minutes');
    const otp = /\b(\d{6})\b/.exec(block)?.[1];
    expect(otp).toBeDefined();
    expect(
      (await t.http().post('/api/v1/verify/otp/').send({ emailOrUsername: user.username, otp })).body,
    ).toEqual(okMessage('OTP Verified'));
  });
});
