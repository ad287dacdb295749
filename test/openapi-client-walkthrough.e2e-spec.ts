import { activationKey, mailedOtp } from './helpers/accounts';
import { freePort } from './helpers/api-process';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, type TestApp } from './helpers/test-app';
import { walkthrough, type Mailbox } from './openapi-client/walkthrough';

/*
 * The README's walkthrough through the client generated from the OpenAPI document
 * (test/openapi-client/walkthrough.ts), run against the real app listening on a real port,
 * with the mail read from the real SMTP sink, on SQLite and on MariaDB (TEST_DATABASE_URL).
 * Every answer is also checked against the document (test/openapi-responses.setup.ts).
 */
describe('the OpenAPI client walkthrough', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    await smtp.start();
    const port = await freePort();
    t = await createTestApp({
      smtp,
      env: { PORT: String(port), SVC_ADMIN_EMAILS: 'admin@example.com' },
    });
    await t.app.listen(port, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await t?.close();
    await smtp.stop();
  });

  it('goes from registration to the approved plugin in the catalogue', async () => {
    const mailbox: Mailbox = {
      activationKey: (email) => activationKey(t, smtp, email),
      otp: (email) => mailedOtp(t, smtp, email),
    };
    expect(await walkthrough(baseUrl, mailbox)).toEqual([
      'targets: 1 example.com:443',
      'general: dns_resolver follow_redirects http_timeout keep_raw_output log_level max_concurrent_scans ' +
        'max_requests_per_second report_dir report_format scan_timeout temp_dir threads user_agent ' +
        'verify_tls workspace_dir',
      'hello: pending null',
      'source: 64 characters',
      'approved by 2',
      'hello 1.0.0',
    ]);
  }, 60_000);
});
