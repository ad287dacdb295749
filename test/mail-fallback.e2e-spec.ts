import {
  getJson,
  post,
  spawnApiProcess,
  waitUntilReady,
  type ObservedApiProcess,
} from './helpers/api-process';
import { newUser } from './helpers/accounts';
import { okMessage } from './helpers/envelopes';

/**
 * Without SMTP_HOST the text of each mail goes to stdout so the operator can act on it. The
 * mail thread writes it to the process's standard output itself, so this reads the output of
 * the real entrypoint run as its own process, as an operator would.
 */
describe('mail without SMTP_HOST', () => {
  let api: ObservedApiProcess;

  beforeAll(async () => {
    api = await spawnApiProcess({ SERVER_ADDR: '10.1.2.3', FRONTEND_PORT: '9000', RATE_LIMIT: 'off' });
    await waitUntilReady(api.port, api.child);
  });
  afterAll(async () => {
    api.child.kill('SIGTERM');
    await api.exited;
  });

  /** The printed block of the newest mail to `email` with `subject`, once it is there. */
  async function printedMail(email: string, subject: string): Promise<string> {
    const block = new RegExp(
      `----- mail to ${email.replace(/[.]/g, '\\.')} -----\\nSubject: ${subject}\\n[\\s\\S]*?\\n-----\\n`,
      'g',
    );
    await api.waitForOutput(block);
    const blocks = api.stdout().match(block)!;
    return blocks[blocks.length - 1];
  }

  async function registered(prefix: string) {
    const user = newUser(prefix);
    const answer = await post(api.port, '/api/v1/register/', {
      username: user.username,
      email: user.email,
      password: user.password,
      confirm_password: user.password,
    });
    expect(answer.body).toEqual(okMessage('User created successfully'));
    return user;
  }

  it('prints the activation mail as text, tags stripped, with a link that works', async () => {
    const user = await registered('nosmtp');
    const answer = await post(api.port, '/api/v1/generate/confirm_email/', { email: user.email });
    expect(answer.body).toEqual(okMessage('Email send successful'));
    const block = await printedMail(user.email, 'Account Activation');
    // No username in a mail to an unconfirmed address.
    expect(block).toContain('Hello,\n');
    expect(block).not.toMatch(/<\/?(p|a|b)\b/);
    const key = /http:\/\/10\.1\.2\.3:9000\/email-verify\/([0-9a-f-]{36})/.exec(block)?.[1];
    expect(key).toBeDefined();
    expect((await getJson(api.port, `/api/v1/verify/confirm_email/${key}`)).body).toEqual(
      okMessage('Email Verified'),
    );
  });

  it('prints nothing for an address without an account', async () => {
    const answer = await post(api.port, '/api/v1/generate/confirm_email/', { email: 'ghost@example.com' });
    expect(answer.body).toEqual(okMessage('Email send successful'));
    // A mail to a registered address asked for after it is printed; none to the ghost before it.
    const user = await registered('afterghost');
    await post(api.port, '/api/v1/generate/confirm_email/', { email: user.email });
    await printedMail(user.email, 'Account Activation');
    expect(api.stdout()).not.toContain('ghost@example.com');
  });

  it('prints the OTP mail, and the printed OTP verifies', async () => {
    const user = await registered('nosmtpotp');
    const answer = await post(api.port, '/api/v1/generate/otp/', { emailOrUsername: user.username });
    expect(answer.body).toEqual(okMessage('Otp Send Successful'));
    const block = await printedMail(user.email, 'OTP for Password Change');
    expect(block).toContain('expires in 5 minutes');
    const otp = /\b(\d{6})\b/.exec(block)?.[1];
    expect(otp).toBeDefined();
    expect(
      (await post(api.port, '/api/v1/verify/otp/', { emailOrUsername: user.username, otp })).body,
    ).toEqual(okMessage('OTP Verified'));
  });
});
