import { Logger } from '@nestjs/common';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { otpFor } from '../src/account/otp';
import { MAX_OTP_FAILURES, OTP_FAILURE_BUDGET, OTP_LIFETIME_MS } from '../src/account/otp.service';
import {
  activate,
  login,
  newUser,
  mailedOtp,
  register,
  setPasswordByOtp,
  signUp,
  STRONG_PASSWORD,
  TestUser,
} from './helpers/accounts';
import { databaseUrlOf } from './helpers/marketplace';
import { accountFail, okMessage as ok } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { bootApp, createTestApp, TestApp } from './helpers/test-app';

const HOUR_MS = 3_600_000;
const wrong = (otp: string, offset = 1) => String((Number(otp) + offset) % 1_000_000).padStart(6, '0');

describe('account hardening', () => {
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
  afterEach(() => t.clock.reset());

  const post = (path: string, body: Record<string, string>) => t.http().post(`/api/v1/${path}`).send(body);
  const requestOtp = async (user: TestUser) => {
    expect((await post('generate/otp/', { emailOrUsername: user.email })).body).toEqual(
      ok('Otp Send Successful'),
    );
    return mailedOtp(t, smtp, user.email);
  };
  const failedAttempts = async (user: TestUser): Promise<number> => {
    const [row] = (await t.dataSource.query('SELECT otp_failed_attempts AS n FROM users WHERE email = ?', [
      user.email,
    ])) as Array<{ n: number | string }>;
    return Number(row.n);
  };

  describe('the password-reset OTP', () => {
    it('is accepted only once issued: the code of the account secret is refused before any request', async () => {
      const user = await signUp(t, smtp, 'noissue');
      const [row] = (await t.dataSource.query('SELECT otp_secret_key AS secret FROM users WHERE email = ?', [
        user.email,
      ])) as Array<{ secret: string }>;
      const code = await otpFor(row.secret, t.clock.now());
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp: code })).body).toEqual(
        accountFail('Invalid OTP'),
      );
      expect(
        (await post('new-password/', { emailOrUsername: user.email, otp: code, password: 'N3w!Passw0rd' }))
          .body,
      ).toEqual(accountFail('Invalid OTP'));
    });

    it('lives 300 s from its issue, also across a 300 s clock step', async () => {
      const user = await signUp(t, smtp, 'otplife');
      // Issue 200 s into a clock-aligned step: a step-bound code would die 100 s later.
      t.clock.advance(200_000 - (t.clock.now().getTime() % 300_000) + 300_000);
      // The checks are 1 s either side of the end: the instants are the test's, not the machine's.
      t.clock.freeze();
      const otp = await requestOtp(user);
      t.clock.advance(OTP_LIFETIME_MS - 1_000);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        ok('OTP Verified'),
      );
      t.clock.advance(1_000);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        accountFail('Invalid OTP'),
      );
    });

    it('dies when a new one is issued', async () => {
      const user = await signUp(t, smtp, 'otpnew');
      const first = await requestOtp(user);
      const second = await requestOtp(user);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp: first })).body).toEqual(
        first === second ? ok('OTP Verified') : accountFail('Invalid OTP'),
      );
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp: second })).body).toEqual(
        ok('OTP Verified'),
      );
    });

    it('takes at most 5 failed checks across both endpoints: 50 guesses at once, the right one last, is refused', async () => {
      const user = await signUp(t, smtp, 'otpburst');
      const otp = await requestOtp(user);
      const guesses = Array.from({ length: 49 }, (_, i) => wrong(otp, i + 1)).concat(otp);
      const answers = await Promise.all(
        guesses.map((guess, i) =>
          i % 2 === 0
            ? post('verify/otp/', { emailOrUsername: user.email, otp: guess })
            : post('new-password/', { emailOrUsername: user.email, otp: guess, password: 'N3w!Passw0rd' }),
        ),
      );
      expect(answers.map((answer) => answer.body)).toEqual(guesses.map(() => accountFail('Invalid OTP')));
      expect(await failedAttempts(user)).toBe(MAX_OTP_FAILURES);
      // No budget comes back by itself: the right code stays refused, now and later in its life.
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        accountFail('Invalid OTP'),
      );
      t.clock.advance(60_000);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        accountFail('Invalid OTP'),
      );
      expect((await login(t, user)).length).toBeGreaterThan(0);
      // A new OTP is the only new budget.
      const fresh = await requestOtp(user);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp: fresh })).body).toEqual(
        ok('OTP Verified'),
      );
    });

    it('does not charge right codes: verify then new-password after 4 typos still works', async () => {
      const user = await signUp(t, smtp, 'otptypos');
      const otp = await requestOtp(user);
      for (let i = 1; i < MAX_OTP_FAILURES; i += 1) {
        expect((await post('verify/otp/', { emailOrUsername: user.email, otp: wrong(otp, i) })).body).toEqual(
          accountFail('Invalid OTP'),
        );
      }
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        ok('OTP Verified'),
      );
      expect(
        (await post('new-password/', { emailOrUsername: user.email, otp, password: 'N3w!Passw0rd' })).body,
      ).toEqual(ok('Password Change Successful'));
    });

    it('is not replaced while pending: requests at once mail one code again and again', async () => {
      // Registered only: signing up would spend an issue on the confirmation's password reset.
      const user = newUser('otppending');
      await register(t, user);
      const burst = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          // The account by email and by name: one pending code.
          post('generate/otp/', { emailOrUsername: i % 2 ? user.email : user.username.toUpperCase() }),
        ),
      );
      expect(burst.map((answer) => [answer.status, answer.body])).toEqual(
        Array(8).fill([200, ok('Otp Send Successful')]),
      );
      await t.deliverMail();
      const mailed = smtp.received
        .filter((mail) => mail.to.includes(user.email) && mail.subject === 'OTP for Password Change')
        .map((mail) => /\b(\d{6})\b/.exec(mail.text)![1]);
      expect(mailed).toHaveLength(8);
      expect(new Set(mailed).size).toBe(1);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp: mailed[0] })).body).toEqual(
        ok('OTP Verified'),
      );
    });

    it(`gives an account's codes at most ${OTP_FAILURE_BUDGET.perHour} failed checks an hour window and ${OTP_FAILURE_BUDGET.perDay} a day window`, async () => {
      const user = newUser('otpbudget');
      await register(t, user);
      /** Codes made and spent (5 wrong guesses each) until a new one is refused. */
      const spendUntilRefused = async () => {
        for (let codes = 0; ; codes += 1) {
          const answer = await post('generate/otp/', { emailOrUsername: user.email });
          if (answer.status !== 200) return { codes, refused: answer };
          const otp = await mailedOtp(t, smtp, user.email);
          for (let i = 1; i <= MAX_OTP_FAILURES; i += 1) {
            expect(
              (await post('verify/otp/', { emailOrUsername: user.email, otp: wrong(otp, i) })).body,
            ).toEqual(accountFail('Invalid OTP'));
          }
        }
      };
      // 25 failed checks fill the hour; the window opened with the first code.
      const expectRefused = ({ refused }: { refused: { status: number; body: unknown } }) =>
        expect([refused.status, refused.body]).toEqual([429, accountFail('Too many requests')]);
      const retryAfter = ({ refused }: { refused: { headers: Record<string, unknown> } }) =>
        Number(refused.headers['retry-after']);
      const hour = await spendUntilRefused();
      expectRefused(hour);
      expect(hour.codes).toBe(OTP_FAILURE_BUDGET.perHour / MAX_OTP_FAILURES);
      expect(retryAfter(hour)).toBeGreaterThan(HOUR_MS / 1000 - 60);
      expect(retryAfter(hour)).toBeLessThanOrEqual(HOUR_MS / 1000);
      // The next hour takes the last code's 5 failures too: 4 new codes.
      t.clock.advance(HOUR_MS);
      const nextHour = await spendUntilRefused();
      expectRefused(nextHour);
      expect(nextHour.codes).toBe(4);
      // Then the day's 50 are reached: 10 codes of 5 failed checks, and no more until the day ends.
      t.clock.advance(HOUR_MS);
      const day = await spendUntilRefused();
      expectRefused(day);
      expect(day.codes).toBe(1);
      expect(retryAfter(day)).toBeGreaterThan(22 * 3600 - 60);
      expect(retryAfter(day)).toBeLessThanOrEqual(22 * 3600);
      t.clock.advance(24 * HOUR_MS);
      await requestOtp(user);
    });

    it('changes the password exactly once when one code is sent 8 times at once', async () => {
      const user = await signUp(t, smtp, 'otprace');
      const otp = await requestOtp(user);
      const passwords = Array.from({ length: 8 }, (_, i) => `Rac3!Passw0rd${i}`);
      const answers = await Promise.all(
        passwords.map((password) => post('new-password/', { emailOrUsername: user.email, otp, password })),
      );
      const won = answers.flatMap((answer, i) =>
        answer.body.message === 'Password Change Successful' ? [passwords[i]] : [],
      );
      expect(won).toHaveLength(1);
      expect(answers.filter((answer) => answer.body.message === 'Invalid OTP')).toHaveLength(7);
      for (const password of passwords) {
        const answer = await post('login/', { emailOrUsername: user.email, password });
        expect(answer.body.status).toBe(password === won[0] ? 'success' : 'fail');
      }
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        accountFail('Invalid OTP'),
      );
    });
  });

  describe('usernames and emails', () => {
    const registration = (username: string, email: string) => ({
      username,
      email,
      password: STRONG_PASSWORD,
      confirm_password: STRONG_PASSWORD,
    });

    it('registers one of 26 spellings of a name sent at once', async () => {
      const spellings = Array.from({ length: 26 }, (_, i) =>
        [...'casefold'].map((letter, bit) => (((i + 1) >> bit) & 1 ? letter.toUpperCase() : letter)).join(''),
      );
      expect(new Set(spellings).size).toBe(26);
      const answers = await Promise.all(
        spellings.map((name, i) => post('register/', registration(name, `casefold${i}@example.com`))),
      );
      const bodies = answers.map((answer) => answer.body);
      expect(bodies.filter((body) => body.status === 'success')).toEqual([ok('User created successfully')]);
      expect(bodies.filter((body) => body.status !== 'success')).toEqual(
        Array(25).fill(accountFail('Username already exists')),
      );
    });

    it('registers one of 10 spellings of an email sent at once', async () => {
      const spellings = ['dup@example.com', 'DUP@example.com', 'Dup@Example.com', 'dUp@EXAMPLE.COM'];
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          post('register/', registration(`dupmail${i}`, spellings[i % spellings.length])),
        ),
      );
      const bodies = answers.map((answer) => answer.body);
      expect(bodies.filter((body) => body.status === 'success')).toHaveLength(1);
      expect(bodies.filter((body) => body.status !== 'success')).toEqual(
        Array(9).fill(accountFail('Email already exists')),
      );
    });

    it('knows Émile, ÉMILE and a decomposed Émile as one name, and émile and emile as two', async () => {
      const emile = { username: 'Émile', email: 'emile.one@example.com', password: STRONG_PASSWORD };
      await register(t, emile);
      for (const spelling of ['émile', 'ÉMILE', 'E\u0301mile', 'Ｅ\u0301mile']) {
        expect(
          (await post('register/', registration(spelling, `${Math.random()}@example.com`))).body,
        ).toEqual(accountFail('Username already exists'));
      }
      const plain = { username: 'emile', email: 'emile.two@example.com', password: 'Oth3r!Passw0rd' };
      await register(t, plain);
      await activate(t, smtp, emile);
      await activate(t, smtp, plain);
      await setPasswordByOtp(t, smtp, emile);
      await setPasswordByOtp(t, smtp, plain);
      for (const spelling of ['ÉMILE', 'E\u0301MILE', 'émile']) {
        expect(await login(t, { ...emile, username: spelling })).toEqual(expect.any(String));
      }
      expect(await login(t, plain)).toEqual(expect.any(String));
    });

    it('does not find an account by an accented spelling of its email', async () => {
      const alice = await signUp(t, smtp, 'alicekey');
      const accented = alice.email.replace('a', 'á');
      expect((await post('generate/otp/', { emailOrUsername: accented })).body).toEqual(
        accountFail("Username / Email doesn't exist"),
      );
      expect((await post('login/', { emailOrUsername: accented, password: alice.password })).body).toEqual(
        accountFail('Invalid login credentials'),
      );
      expect(
        (await post('login/', { emailOrUsername: alice.email.toUpperCase(), password: alice.password })).body
          .status,
      ).toBe('success');
    });
  });

  describe('admin addresses', () => {
    const me = async (token: string) =>
      (
        await t
          .http()
          .get('/api/v1/community-plugins/me/')
          .set('Authorization', `Bearer ${token}`)
          .expect(200)
      ).body.data as { is_admin: boolean };

    it('never give admin rights to a password chosen before the owner proved the mailbox', async () => {
      const squatter = { username: 'boss', email: 'Boss@Example.com', password: 'Squ4tter!Pass' };
      await register(t, squatter);
      // The owner clicks the activation link that arrives in the mailbox.
      await activate(t, smtp, { ...squatter, email: 'boss@example.com' });
      expect(
        (await post('login/', { emailOrUsername: 'boss@example.com', password: squatter.password })).body,
      ).toEqual(accountFail('Invalid login credentials'));

      const owner = { username: 'boss', email: 'boss@example.com', password: 'Own3r!Passw0rd' };
      await setPasswordByOtp(t, smtp, owner);
      expect((await me(await login(t, owner))).is_admin).toBe(true);
      expect(
        (await post('login/', { emailOrUsername: owner.email, password: squatter.password })).body,
      ).toEqual(accountFail('Invalid login credentials'));
    });

    it('clear an unproven password when start-up promotes an existing user, keep one set by OTP, and revoke both tokens', async () => {
      const url = databaseUrlOf(t);
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-promote-'));
      const early = await signUp(t, smtp, 'early');
      // A password from before confirmation cleared unproven ones: chosen at registration.
      await t.dataSource.query('UPDATE users SET password_set_via_otp = ? WHERE email = ?', [
        false,
        early.email,
      ]);
      const proven = await signUp(t, smtp, 'proven');
      const listed = `${early.email},${proven.email},boss@example.com`;
      const second = await bootApp({ databaseUrl: url, dataDir, smtp, env: { SVC_ADMIN_EMAILS: listed } });
      try {
        const http = () => second.http();
        const meOf = (token: string) =>
          http().get('/api/v1/community-plugins/me/').set('Authorization', `Bearer ${token}`);
        expect((await meOf(early.token)).status).toBe(401);
        expect((await meOf(proven.token)).status).toBe(401);
        expect(
          (
            await http()
              .post('/api/v1/login/')
              .send({ emailOrUsername: early.email, password: early.password })
          ).body,
        ).toEqual(accountFail('Invalid login credentials'));
        await setPasswordByOtp(second, smtp, early);
        const provenMe = await meOf(await login(second, proven)).expect(200);
        expect(provenMe.body.data.is_admin).toBe(true);
        const earlyMe = await meOf(await login(second, early)).expect(200);
        expect(earlyMe.body.data.is_admin).toBe(true);
      } finally {
        await second.close();
      }
    });
  });
});

describe('normalised keys for existing rows', () => {
  it('fills the keys, leaves a colliding later row without one and says so, and boots', async () => {
    const first = await createTestApp();
    const url = databaseUrlOf(first);
    // Back to the schema before the keys, with rows the old schema let in on SQLite.
    const keysApplied = async () =>
      ((await first.dataSource.query('SELECT name FROM migrations')) as Array<{ name: string }>).some(
        (migration) => migration.name === 'AccountKeysOtpLifecycle1763683500000',
      );
    while (await keysApplied()) await first.dataSource.undoLastMigration();
    const insert = (name: string, email: string) =>
      first.dataSource.query(
        'INSERT INTO users (name, email, password, is_active, is_admin, otp_secret_key, otp_failed_attempts, created_at) ' +
          'VALUES (?, ?, NULL, 1, 0, ?, 0, ?)',
        [name, email, 'JBSWY3DPEHPK3PXP', '2025-01-01 00:00:00.000'],
      );
    await insert('Émile', 'first@example.com');
    await insert('émile', 'second@example.com');
    await insert('Zoë', 'zoe@example.com');
    await insert('zoe', 'ZOE@example.com');
    await first.close();

    const warnings = jest.spyOn(Logger.prototype, 'warn');
    const second = await bootApp({ databaseUrl: url, dataDir: mkdtempSync(join(tmpdir(), 'svc-keys-')) });
    try {
      const rows = (await second.dataSource.query(
        'SELECT name, name_key AS nameKey, email_key AS emailKey FROM users ORDER BY id',
      )) as Array<{ name: string; nameKey: string | null; emailKey: string | null }>;
      expect(rows).toEqual([
        { name: 'Émile', nameKey: 'émile', emailKey: 'first@example.com' },
        { name: 'émile', nameKey: null, emailKey: 'second@example.com' },
        { name: 'Zoë', nameKey: 'zoë', emailKey: 'zoe@example.com' },
        { name: 'zoe', nameKey: 'zoe', emailKey: null },
      ]);
      const said = warnings.mock.calls.map((call) => String(call[0]));
      expect(said).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^User \d+ has the same name as user \d+ once case and Unicode forms are ignored/,
          ),
          expect.stringMatching(
            /^User \d+ has the same email as user \d+ once case and Unicode forms are ignored/,
          ),
        ]),
      );
    } finally {
      warnings.mockRestore();
      await second.close();
    }
  });
});
