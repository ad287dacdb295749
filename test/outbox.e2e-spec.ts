import { Logger } from '@nestjs/common';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Outbox, OUTBOX_GIVE_UP_AFTER_MS } from '../src/outbox/outbox.service';
import { newUser, register, signUp } from './helpers/accounts';
import { databaseUrlOf } from './helpers/marketplace';
import { okMessage as ok } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { bootApp, createTestApp, TestApp } from './helpers/test-app';

interface JobRow {
  kind: string;
  attempts: number | string;
  last_error: string | null;
}

const jobsOf = (t: TestApp) =>
  t.dataSource.query('SELECT kind, attempts, last_error FROM outbox_jobs ORDER BY id') as Promise<JobRow[]>;

/** The durable outbox behind every mail: delayed by outages, kept across restarts, sent once. */
describe('mail outbox', () => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => {
    smtp.rejectAll = false;
    t.clock.reset();
  });

  it('sends by itself, right after the request, and keeps nothing once sent', async () => {
    const user = newUser('worker');
    await register(t, user);
    expect((await t.http().post('/api/v1/generate/confirm_email/').send({ email: user.email })).body).toEqual(
      ok('Email send successful'),
    );
    const [mail] = await smtp.waitFor(user.email);
    expect(mail.subject).toBe('Account Activation');
    await t.deliverMail();
    expect(await jobsOf(t)).toEqual([]);
  });

  it('keeps a refused mail queued, with the reason and without its content, and sends it once SMTP takes it', async () => {
    const user = await signUp(t, smtp, 'queued');
    const sentBefore = smtp.received.length;
    smtp.rejectAll = true;
    await t.http().post('/api/v1/generate/otp/').send({ emailOrUsername: user.email }).expect(200);
    await t.deliverMail();
    const [job] = await jobsOf(t);
    expect({ ...job, attempts: Number(job.attempts) }).toEqual({
      kind: 'mail',
      attempts: 1,
      last_error: 'Email could not be sent',
    });
    smtp.rejectAll = false;
    t.clock.advance(7_000);
    await t.deliverMail();
    expect(smtp.received.slice(sentBefore).filter((mail) => mail.to.includes(user.email))).toHaveLength(1);
    expect(await jobsOf(t)).toEqual([]);
  });

  it('drops a job that still fails after 24 hours, saying so in the log', async () => {
    const user = await signUp(t, smtp, 'giveup');
    smtp.rejectAll = true;
    await t.http().post('/api/v1/generate/otp/').send({ emailOrUsername: user.email }).expect(200);
    await t.deliverMail();
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      t.clock.advance(OUTBOX_GIVE_UP_AFTER_MS);
      await t.deliverMail();
      expect(await jobsOf(t)).toEqual([]);
      const outboxErrors = errors.mock.calls
        .map((call) => String(call[0]))
        .filter((line) => line.startsWith('Outbox'));
      expect(outboxErrors).toEqual([
        expect.stringMatching(/^Outbox job \d+ \(mail\), attempt 2 failed: .*given up after 24 hours/),
      ]);
    } finally {
      errors.mockRestore();
    }
  });

  it('loses nothing across a restart: a mail queued before the stop goes out after the start', async () => {
    const user = await signUp(t, smtp, 'restart');
    const sentBefore = smtp.received.length;
    smtp.rejectAll = true;
    await t.http().post('/api/v1/generate/otp/').send({ emailOrUsername: user.email }).expect(200);
    await t.deliverMail();
    const databaseUrl = databaseUrlOf(t);
    await t.close();

    smtp.rejectAll = false;
    t = await bootApp({ databaseUrl, dataDir: mkdtempSync(join(tmpdir(), 'svc-outbox-')), smtp });
    expect(await jobsOf(t)).toHaveLength(1);
    t.clock.advance(7_000);
    await t.deliverMail();
    const otpMails = smtp.received
      .slice(sentBefore)
      .filter((mail) => mail.to.includes(user.email) && mail.subject === 'OTP for Password Change');
    expect(otpMails).toHaveLength(1);
    expect(await jobsOf(t)).toEqual([]);
  });

  it('sends each queued mail once when two processes work the same outbox at once', async () => {
    const first = t;
    const second = await bootApp({
      databaseUrl: databaseUrlOf(first),
      dataDir: mkdtempSync(join(tmpdir(), 'svc-outbox-')),
      smtp,
    });
    try {
      const addresses = Array.from({ length: 30 }, (_, i) => `twice${i}@example.com`);
      await first.dataSource.transaction(async (manager) => {
        for (const to of addresses) {
          await first.app.get(Outbox).enqueue(manager, 'mail', { to, subject: 'Both', html: '<p>once</p>' });
        }
      });
      await Promise.all([
        first.deliverMail(),
        second.deliverMail(),
        first.deliverMail(),
        second.deliverMail(),
      ]);
      for (const to of addresses) {
        expect([to, smtp.received.filter((mail) => mail.to.includes(to)).length]).toEqual([to, 1]);
      }
      expect(await jobsOf(first)).toEqual([]);
    } finally {
      await second.close();
    }
  });
});
