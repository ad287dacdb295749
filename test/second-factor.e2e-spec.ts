import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generate } from 'otplib';
import { LOGIN_MESSAGES } from '../src/account-logins/login-messages';
import { TOKEN_MANAGEMENT_REFUSED } from '../src/common/access-scopes';
import { ACCOUNT_FAILURE_LIMIT, PAIR_FAILURE_LIMIT } from '../src/rate-limit/account-rate-limit';
import { SECOND_FACTOR_SUBJECTS } from '../src/second-factor/mail-templates';
import { SECOND_FACTOR_MESSAGES as MESSAGES } from '../src/second-factor/second-factor-messages';
import { SECOND_FACTOR_FAILURE_LIMIT } from '../src/second-factor/second-factor.service';
import { login } from './helpers/accounts';
import { post } from './helpers/api-process';
import { api, type Caller } from './helpers/client';
import { accountFail, expectFail, fail } from './helpers/envelopes';
import { signUpAs, svcAdminOn, databaseUrlOf, type SignedInUser } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { appLog, createTestApp, type TestApp } from './helpers/test-app';

// svc-admin runs are processes that load Nest and open the database.
jest.setTimeout(180_000);

/**
 * Issue 45, part 4: TOTP as a second factor, over HTTP on the real app and database; codes are
 * made by the test from the secret the enrolment answered, on the app's (frozen) clock.
 */

const STEP_MS = 30_000;
const invalid = accountFail('Invalid login credentials');
const codeAt = (secret: string, at: Date) =>
  generate({ secret, period: 30, digits: 6, epoch: Math.floor(at.getTime() / 1000) });

interface Enrolled {
  secret: string;
  recovery: string[];
}

function secondFactorApp(env: () => Record<string, string>) {
  const smtp = new SmtpSink();
  const state = { t: undefined as unknown as TestApp, smtp };
  beforeAll(async () => {
    await smtp.start();
    state.t = await createTestApp({ smtp, env: env() });
  });
  afterAll(async () => {
    await state.t.close();
    await smtp.stop();
  });
  afterEach(() => state.t.clock.reset());
  return state;
}

describe('a second factor (TOTP)', () => {
  const app = secondFactorApp(() => ({}));
  const t = () => app.t;
  const now = () => app.t.clock.now();
  const nextStep = () => app.t.clock.advance(STEP_MS);

  /** Enrolment with the caller's current password (a SignedInUser's), or with `body` as given. */
  const enrol = (
    caller: Caller & { password?: string },
    body: Record<string, string> = caller.password ? { current_password: caller.password } : {},
  ) => api(t(), caller, 'post', 'account/totp').send(body);
  const confirm = (caller: Caller, otp?: string) =>
    api(t(), caller, 'post', 'account/totp/confirm').send(otp === undefined ? {} : { otp });
  const turnOff = (caller: Caller, otp?: string) =>
    api(t(), caller, 'delete', 'account/totp').send(otp === undefined ? {} : { otp });
  const loginWith = (user: SignedInUser, extra: Record<string, string> = {}, password = user.password) =>
    t()
      .http()
      .post('/api/v1/login/')
      .send({ emailOrUsername: user.username, password, ...extra });
  const meStatus = async (token: string) =>
    (await api(t(), { token }, 'get', 'community-plugins/me/')).status;
  const auditOf = async (action: string) =>
    (
      (await t().dataSource.query(
        'SELECT actor, actor_user_id, subject, details FROM audit_log WHERE action = ? ORDER BY seq',
        [action],
      )) as Array<{ actor: string; actor_user_id: unknown; subject: string; details: string }>
    ).map((row) => ({
      ...row,
      actor_user_id: row.actor_user_id === null ? null : Number(row.actor_user_id),
    }));

  /** Enrolled and confirmed on the current step; the clock then moves to the next one. */
  async function enrolled(user: SignedInUser): Promise<Enrolled> {
    const secret = ((await enrol(user).expect(201)).body as { data: { secret: string } }).data.secret;
    const answer = await confirm(user, await codeAt(secret, now())).expect(200);
    nextStep();
    return { secret, recovery: (answer.body as { data: { recovery_codes: string[] } }).data.recovery_codes };
  }

  it('enrols: a pending secret, confirmed by its first code, answers ten recovery codes once; login then needs the code', async () => {
    t().clock.freeze();
    const alice = await signUpAs(t(), app.smtp, 'alice');
    const answer = await enrol(alice);
    expect(answer.status).toBe(201);
    const { secret, otpauth_uri } = (answer.body as { data: { secret: string; otpauth_uri: string } }).data;
    expect(answer.body).toEqual({ status: 'success', data: { secret, otpauth_uri } });
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(otpauth_uri);
    expect([uri.protocol, uri.host, decodeURIComponent(uri.pathname)]).toEqual([
      'otpauth:',
      'totp',
      '/SVC:alice@example.com',
    ]);
    // SHA-1, 6 digits and 30 s are the URI's defaults, which otplib leaves out.
    expect(Object.fromEntries(uri.searchParams)).toEqual({ secret, issuer: 'SVC' });

    // Pending: nothing changes for login yet, with or without a code.
    expect((await loginWith(alice)).body.status).toBe('success');
    expect((await loginWith(alice, { otp: '000000' })).body.status).toBe('success');

    // A wrong (or missing) first code turns nothing on.
    expectFail(await confirm(alice, '000000'), 400, MESSAGES.invalidCode);
    expectFail(await confirm(alice), 400, MESSAGES.invalidCode);
    const confirmed = await confirm(alice, await codeAt(secret, now()));
    expect(confirmed.status).toBe(200);
    const codes = (confirmed.body as { data: { recovery_codes: string[] } }).data.recovery_codes;
    expect(confirmed.body).toEqual({ status: 'success', data: { recovery_codes: codes } });
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);
    // Stored hashed; the secret in no answer but the enrolment's, and never in the audit log.
    const stored = JSON.stringify(
      await t().dataSource.query('SELECT * FROM user_recovery_codes WHERE user_id = ?', [alice.id]),
    );
    for (const code of codes) expect(stored).not.toContain(code.replace(/-/g, ''));
    expect(JSON.stringify(confirmed.body)).not.toContain(secret);
    expect(await auditOf('second_factor_enable')).toEqual([
      {
        actor: 'user',
        actor_user_id: alice.id,
        subject: `user:${alice.id}`,
        details: JSON.stringify({ method: 'totp', recovery_codes: 10 }),
      },
    ]);
    const audit = JSON.stringify(await t().dataSource.query('SELECT * FROM audit_log'));
    expect(audit).not.toContain(secret);
    // The session that turned it on stays.
    expect(await meStatus(alice.token)).toBe(200);

    // A wrong password answers exactly as today, whatever the code; the right one asks for the code.
    expect((await loginWith(alice, {}, 'Wr0ng!pass')).body).toEqual(invalid);
    expect((await loginWith(alice, { otp: await codeAt(secret, now()) }, 'Wr0ng!pass')).body).toEqual(
      invalid,
    );
    expect((await loginWith(alice)).body).toEqual(accountFail(MESSAGES.loginRefused));
    expect((await loginWith(alice, { otp: '123456' })).body).toEqual(accountFail(MESSAGES.loginRefused));
    expect((await loginWith(alice, { otp: 'not a code' })).body).toEqual(accountFail(MESSAGES.loginRefused));
    // The confirming code's step is used: the same code again is a replay.
    expect((await loginWith(alice, { otp: await codeAt(secret, now()) })).body).toEqual(
      accountFail(MESSAGES.loginRefused),
    );
    nextStep();
    const code = await codeAt(secret, now());
    const passed = await loginWith(alice, { otp: code });
    expect(passed.body.status).toBe('success');
    expect(await meStatus(passed.body.message['jwt-token'] as string)).toBe(200);
    expect((await loginWith(alice, { otp: code })).body).toEqual(accountFail(MESSAGES.loginRefused));
    expect(
      appLog
        .take(['log', 'error', 'warn', 'debug', 'verbose', 'fatal'])
        .map((e) => e.message)
        .join('\n'),
    ).not.toContain(secret);
  });

  it('asks for the current password to enrol, checked as the password change checks it: a stolen session alone enrols nothing', async () => {
    t().clock.freeze();
    const olga = await signUpAs(t(), app.smtp, 'olga');
    // The thief holds the JWT only.
    const thief = { token: olga.token };
    expectFail(await enrol(thief), 400, LOGIN_MESSAGES.missingCurrent);
    expectFail(await enrol(thief, { current_password: '' }), 400, LOGIN_MESSAGES.missingCurrent);
    expectFail(await enrol(thief, { current_password: 'Wr0ng!pass' }), 403, LOGIN_MESSAGES.wrongCurrent);
    expectFail(await enrol(thief, { current_password: 'x'.repeat(100) }), 403, LOGIN_MESSAGES.wrongCurrent);
    // A form works as JSON does.
    const form = await api(t(), thief, 'post', 'account/totp')
      .type('form')
      .send(`current_password=${encodeURIComponent('Wr0ng!pass')}`);
    expectFail(form, 403, LOGIN_MESSAGES.wrongCurrent);
    // Nothing was written: no pending secret, nothing to confirm.
    expect(await t().dataSource.query('SELECT * FROM user_totp WHERE user_id = ?', [olga.id])).toEqual([]);
    expectFail(await confirm(thief, '123456'), 409, MESSAGES.nothingPending);
    expect([
      LOGIN_MESSAGES.missingCurrent,
      LOGIN_MESSAGES.wrongCurrent,
      LOGIN_MESSAGES.locked,
      LOGIN_MESSAGES.changedMeanwhile,
    ]).toEqual([
      'Missing current password value',
      'Current password is incorrect',
      'The account is locked: set a new password through the mailed one-time password (/password-reset)',
      'The password was changed by another request meanwhile; nothing was changed',
    ]);
    // The owner, who knows it, enrols; the state is checked after the password.
    expect((await enrol(olga)).status).toBe(201);
    await enrolled(olga);
    expectFail(await enrol(olga, { current_password: 'Wr0ng!pass' }), 403, LOGIN_MESSAGES.wrongCurrent);
    expectFail(await enrol(olga), 409, MESSAGES.alreadyOn);
  });

  it('an enrolment racing a password change of its own login: it either read the old password and is refused, or enrols; never with a password the account no longer has', async () => {
    for (let round = 0; round < 4; round += 1) {
      const user = await signUpAs(t(), app.smtp, `pia${round}`);
      const next = `N3w${user.password}${round}`;
      const [enrolment, changed] = await Promise.all([
        enrol(user),
        api(t(), user, 'post', 'account/password').send({
          current_password: user.password,
          password: next,
          confirm_password: next,
        }),
      ]);
      expect(changed.status).toBe(200);
      const rows = (await t().dataSource.query('SELECT enabled_at FROM user_totp WHERE user_id = ?', [
        user.id,
      ])) as unknown[];
      // Committed before the change (pending, nothing on); or it read the hash the change replaced
      // (409), or the new one (403): then nothing is written.
      const outcome = [enrolment.status, enrolment.status === 201 ? null : enrolment.body, rows.length];
      expect([
        [201, null, 1],
        [409, fail(LOGIN_MESSAGES.changedMeanwhile), 0],
        [403, fail(LOGIN_MESSAGES.wrongCurrent), 0],
      ]).toContainEqual(outcome);
      expect(await meStatus(user.token)).toBe(200);
    }
  });

  it('mails the owner when it is turned on, turned off with a code or a recovery code, and reset by svc-admin', async () => {
    t().clock.freeze();
    const quinn = await signUpAs(t(), app.smtp, 'quinn');
    const mailsTo = async (subject: string, count: number) => {
      await t().deliverMail();
      await app.smtp.until(
        () =>
          app.smtp.received.filter((mail) => mail.to.includes(quinn.email) && mail.subject === subject)
            .length >= count,
        () => `no mail "${subject}"`,
      );
      const mails = app.smtp.received.filter(
        (mail) => mail.to.includes(quinn.email) && mail.subject === subject,
      );
      expect(mails).toHaveLength(count);
      return mails.at(-1)!.text.replace(/\s+/g, ' ');
    };
    // A pending enrolment mails nothing; the confirmation does.
    const { secret } = await enrolled(quinn);
    const on = await mailsTo(SECOND_FACTOR_SUBJECTS.on, 1);
    expect(on).toContain('Every other login and every access token of the account has been ended.');
    expect(on).toContain("ask the service's administrators to turn off the second factor that is not yours");
    expect(on).toMatch(/\/password-reset/);
    expect(on).not.toContain(secret);

    await turnOff(quinn, await codeAt(secret, now())).expect(200);
    expect(await mailsTo(SECOND_FACTOR_SUBJECTS.off, 1)).toContain('with a code of the authenticator app');
    const { recovery } = await enrolled(quinn);
    await mailsTo(SECOND_FACTOR_SUBJECTS.on, 2);
    await turnOff(quinn, recovery[0]).expect(200);
    const off = await mailsTo(SECOND_FACTOR_SUBJECTS.off, 2);
    expect(off).toContain('with a recovery code');
    expect(off).not.toContain(recovery[0]);
    // A wrong code turns nothing off and mails nothing.
    await enrolled(quinn);
    expectFail(await turnOff(quinn, '000000'), 400, MESSAGES.invalidCode);

    expect((await svcAdminOn(t(), ['second-factor', 'reset', quinn.email])).code).toBe(0);
    // svc-admin queues the mail in the outbox with its own clock; the app's frozen one is moved past it.
    t().clock.advance(60_000);
    const reset = await mailsTo(SECOND_FACTOR_SUBJECTS.reset, 1);
    expect(reset).toContain('every login and access token of the account has been ended');
    expect(reset).toMatch(/\/password-reset/);
    expect(
      app.smtp.received.filter(
        (mail) => mail.to.includes(quinn.email) && mail.subject === SECOND_FACTOR_SUBJECTS.off,
      ),
    ).toHaveLength(2);
    // Nothing to reset mails nothing.
    expect((await svcAdminOn(t(), ['second-factor', 'reset', quinn.email])).stdout).toBe(
      `${quinn.email} has no second factor\n`,
    );
    await t().deliverMail();
    expect(
      app.smtp.received.filter(
        (mail) => mail.to.includes(quinn.email) && mail.subject === SECOND_FACTOR_SUBJECTS.reset,
      ),
    ).toHaveLength(1);
    expect(SECOND_FACTOR_SUBJECTS).toEqual({
      on: 'A second factor was turned on for your account',
      off: 'The second factor of your account was turned off',
      reset: 'An administrator turned off the second factor of your account',
    });
  });

  it('allows one step of clock drift either way, never two, and never a step older than one accepted', async () => {
    t().clock.freeze();
    const bob = await signUpAs(t(), app.smtp, 'bob');
    const { secret } = await enrolled(bob);
    nextStep();
    const at = (steps: number) => codeAt(secret, new Date(now().getTime() + steps * STEP_MS));
    expect((await loginWith(bob, { otp: await at(-2) })).body).toEqual(accountFail(MESSAGES.loginRefused));
    expect((await loginWith(bob, { otp: await at(2) })).body).toEqual(accountFail(MESSAGES.loginRefused));
    expect((await loginWith(bob, { otp: await at(-1) })).body.status).toBe('success');
    expect((await loginWith(bob, { otp: await at(1) })).body.status).toBe('success');
    // The step after the server's was accepted: the current one is now older than it.
    expect((await loginWith(bob, { otp: await at(0) })).body).toEqual(accountFail(MESSAGES.loginRefused));
  });

  it('accepts one code once when ten logins carry it at once, and one recovery code once likewise', async () => {
    t().clock.freeze();
    const carl = await signUpAs(t(), app.smtp, 'carl');
    const { secret, recovery } = await enrolled(carl);
    const code = await codeAt(secret, now());
    const byCode = await Promise.all(Array.from({ length: 10 }, () => loginWith(carl, { otp: code })));
    expect(byCode.filter((answer) => answer.body.status === 'success')).toHaveLength(1);
    expect(byCode.filter((answer) => answer.body.message === MESSAGES.loginRefused)).toHaveLength(9);

    // A recovery code, as printed or typed in capitals without dashes, works once.
    const typed = recovery[0].replace(/-/g, '').toUpperCase();
    const byRecovery = await Promise.all(Array.from({ length: 10 }, () => loginWith(carl, { otp: typed })));
    expect(byRecovery.filter((answer) => answer.body.status === 'success')).toHaveLength(1);
    expect(byRecovery.filter((answer) => answer.body.message === MESSAGES.loginRefused)).toHaveLength(9);
    expect((await loginWith(carl, { otp: recovery[0] })).body).toEqual(accountFail(MESSAGES.loginRefused));
    expect((await loginWith(carl, { otp: recovery[1] })).body.status).toBe('success');
    expect((await auditOf('second_factor_recovery')).map((row) => [row.subject, row.details])).toEqual([
      [`user:${carl.id}`, JSON.stringify({ recovery_codes_left: 9 })],
      [`user:${carl.id}`, JSON.stringify({ recovery_codes_left: 8 })],
    ]);
  });

  it('ends every other session when it is turned on, a login in flight included; the enroller’s stays', async () => {
    t().clock.freeze();
    const dora = await signUpAs(t(), app.smtp, 'dora');
    const otherSession = await login(t(), dora);
    const pat = (
      (
        await api(t(), dora, 'post', 'account/tokens')
          .send({ name: 'ci', scopes: ['read'] })
          .expect(201)
      ).body as {
        data: { token: string };
      }
    ).data.token;
    const secret = ((await enrol(dora).expect(201)).body as { data: { secret: string } }).data.secret;
    const code = await codeAt(secret, now());
    const [confirmed, ...logins] = await Promise.all([
      confirm(dora, code),
      ...Array.from({ length: 8 }, () => loginWith(dora)),
    ]);
    expect(confirmed.status).toBe(200);
    // A login that read the account before the second factor was on got a token that never
    // works; one that read it after was asked for the code.
    const outcomes = await Promise.all(
      logins.map(async (answer) =>
        answer.body.status === 'success'
          ? `token, then ${await meStatus(answer.body.message['jwt-token'] as string)}`
          : String(answer.body.message),
      ),
    );
    expect(
      outcomes.filter((outcome) => outcome !== 'token, then 401' && outcome !== MESSAGES.loginRefused),
    ).toEqual([]);
    expect(await meStatus(dora.token)).toBe(200);
    expect(await meStatus(otherSession)).toBe(401);
    expect(await meStatus(pat)).toBe(401);
  });

  it('binds the confirmation to the secret it checked: a replacement racing it is never turned on unconfirmed', async () => {
    t().clock.freeze();
    const emma = await signUpAs(t(), app.smtp, 'emma');
    // Replaced before: the first secret's code no longer confirms anything.
    const first = ((await enrol(emma).expect(201)).body as { data: { secret: string } }).data.secret;
    const second = ((await enrol(emma).expect(201)).body as { data: { secret: string } }).data.secret;
    expect(second).not.toBe(first);
    expectFail(await confirm(emma, await codeAt(first, now())), 400, MESSAGES.invalidCode);

    for (let round = 0; round < 4; round += 1) {
      const pending = ((await enrol(emma).expect(201)).body as { data: { secret: string } }).data.secret;
      const [confirmed, replaced] = await Promise.all([
        confirm(emma, await codeAt(pending, now())),
        enrol(emma),
      ]);
      const [row] = (await t().dataSource.query(
        'SELECT secret, enabled_at FROM user_totp WHERE user_id = ?',
        [emma.id],
      )) as Array<{ secret: string; enabled_at: unknown }>;
      const newer = (replaced.body as { data?: { secret?: string } }).data?.secret;
      const outcome = {
        confirm: [confirmed.status, confirmed.status === 200 ? null : confirmed.body.message],
        enrol: [replaced.status, replaced.status === 201 ? null : replaced.body.message],
        row: [
          row.secret === pending ? 'confirmed' : row.secret === newer ? 'newer' : 'other',
          row.enabled_at !== null,
        ],
      };
      // Confirmed first: the secret confirmed is on and the enrolment after it refused. Replaced
      // first: the confirmation checked a secret that is gone, and the newer one waits.
      const allowed = [
        { confirm: [200, null], enrol: [409, MESSAGES.alreadyOn], row: ['confirmed', true] },
        { confirm: [400, MESSAGES.invalidCode], enrol: [201, null], row: ['newer', false] },
        { confirm: [409, MESSAGES.replaced], enrol: [201, null], row: ['newer', false] },
      ];
      expect(allowed).toContainEqual(outcome);
      if (outcome.row[1] === true) {
        nextStep();
        await turnOff(emma, await codeAt(pending, now())).expect(200);
      }
      nextStep();
    }
  });

  it('refuses clearly what does not fit the state: enrolment while on, confirmation with nothing pending, turning off what is off', async () => {
    t().clock.freeze();
    const finn = await signUpAs(t(), app.smtp, 'finn');
    expectFail(await confirm(finn, '123456'), 409, MESSAGES.nothingPending);
    expectFail(await turnOff(finn, '123456'), 409, MESSAGES.notOn);
    await enrolled(finn);
    expectFail(await enrol(finn), 409, MESSAGES.alreadyOn);
    expectFail(await confirm(finn, '123456'), 409, MESSAGES.alreadyOn);
    expect(MESSAGES).toEqual({
      loginRefused: 'Invalid or missing second factor code',
      adminNeedsEnrolment: 'Admin routes need a second factor: enrol one with POST /api/v1/account/totp',
      alreadyOn: 'A second factor is already on: turn it off first',
      nothingPending: 'No second factor is waiting for confirmation: start with POST /api/v1/account/totp',
      replaced: 'The secret waiting for confirmation was replaced: confirm the newest one',
      notOn: 'No second factor is on',
      invalidCode: 'Invalid one-time code',
    });
  });

  it('turns off with a current code or a recovery code, each used once; login is the password alone again', async () => {
    t().clock.freeze();
    const gus = await signUpAs(t(), app.smtp, 'gus');
    const { secret } = await enrolled(gus);
    expectFail(await turnOff(gus), 400, MESSAGES.invalidCode);
    expectFail(await turnOff(gus, '000000'), 400, MESSAGES.invalidCode);
    const code = await codeAt(secret, now());
    // A code a login used cannot turn it off.
    expect((await loginWith(gus, { otp: code })).body.status).toBe('success');
    expectFail(await turnOff(gus, code), 400, MESSAGES.invalidCode);
    nextStep();
    expect((await turnOff(gus, await codeAt(secret, now()))).body).toEqual({ status: 'success', data: null });
    expect((await loginWith(gus)).body.status).toBe('success');
    expect(
      await t().dataSource.query('SELECT * FROM user_recovery_codes WHERE user_id = ?', [gus.id]),
    ).toEqual([]);

    const hana = await signUpAs(t(), app.smtp, 'hana');
    const { recovery } = await enrolled(hana);
    expect((await turnOff(hana, recovery[3])).status).toBe(200);
    expect((await loginWith(hana)).body.status).toBe('success');
    const ours = [`user:${gus.id}`, `user:${hana.id}`];
    const disabled = (await auditOf('second_factor_disable')).filter((row) => ours.includes(row.subject));
    expect(disabled.map((row) => [row.subject, row.details])).toEqual([
      [`user:${gus.id}`, JSON.stringify({ method: 'totp' })],
      [`user:${hana.id}`, JSON.stringify({ method: 'recovery_code' })],
    ]);
  });

  it('is managed with a password login only: an access token is refused on every route of it', async () => {
    const ivan = await signUpAs(t(), app.smtp, 'ivan');
    const token = (
      (
        await api(t(), ivan, 'post', 'account/tokens')
          .send({ name: 'ci', scopes: ['read', 'upload'] })
          .expect(201)
      ).body as { data: { token: string } }
    ).data.token;
    expectFail(await enrol({ token }), 403, TOKEN_MANAGEMENT_REFUSED);
    expectFail(await confirm({ token }, '123456'), 403, TOKEN_MANAGEMENT_REFUSED);
    expectFail(await turnOff({ token }, '123456'), 403, TOKEN_MANAGEMENT_REFUSED);
  });

  it('leaves a user who is not enrolled exactly today’s answers, an otp field sent or not', async () => {
    const jane = await signUpAs(t(), app.smtp, 'jane');
    expect((await t().http().post('/api/v1/login/').send({ password: jane.password })).body).toEqual(
      accountFail('Missing email or username value'),
    );
    expect((await t().http().post('/api/v1/login/').send({ emailOrUsername: jane.username })).body).toEqual(
      accountFail('Missing password value'),
    );
    expect((await loginWith(jane, { otp: '123456' }, 'Wr0ng!pass')).body).toEqual(invalid);
    expect((await loginWith(jane, { otp: 'whatever' })).body.status).toBe('success');
    expect((await loginWith(jane)).body.status).toBe('success');
  });

  it('svc-admin second-factor reset turns off a lost one, ends every session, and is audited; the database is named in its errors', async () => {
    t().clock.freeze();
    const kim = await signUpAs(t(), app.smtp, 'kim');
    expect(await svcAdminOn(t(), ['second-factor', 'reset', 'kim@example.com'])).toEqual({
      code: 0,
      stdout: 'kim@example.com has no second factor\n',
      stderr: '',
    });
    await enrolled(kim);
    expect((await loginWith(kim)).body).toEqual(accountFail(MESSAGES.loginRefused));
    expect(await svcAdminOn(t(), ['second-factor', 'reset', ' KIM@example.com '])).toEqual({
      code: 0,
      stdout:
        'Turned off the second factor of KIM@example.com; its tokens were revoked, so it logs in with the password alone\n',
      stderr: '',
    });
    expect(await meStatus(kim.token)).toBe(401);
    expect((await loginWith(kim)).body.status).toBe('success');
    expect((await auditOf('second_factor_reset')).filter((row) => row.subject === `user:${kim.id}`)).toEqual([
      {
        actor: 'svc-admin',
        actor_user_id: null,
        subject: `user:${kim.id}`,
        details: JSON.stringify({ email: 'KIM@example.com' }),
      },
    ]);
    const database = databaseUrlOf(t()).replace(/^(mysql:\/\/[^:@]*)(:[^@]*)?@/, '$1@');
    expect(await svcAdminOn(t(), ['second-factor', 'reset', 'nobody@example.com'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `No user found with email nobody@example.com in ${database}\n`,
    });
  });
});

describe('ADMIN_SECOND_FACTOR=required', () => {
  const app = secondFactorApp(() => ({
    SVC_ADMIN_EMAILS: 'boss@example.com',
    ADMIN_SECOND_FACTOR: 'required',
  }));

  it('answers 403 on admin routes, and withholds admin power everywhere, until the admin has confirmed a TOTP; enrolment stays reachable', async () => {
    const t = app.t;
    t.clock.freeze();
    const boss = await signUpAs(t, app.smtp, 'boss');
    const alice = await signUpAs(t, app.smtp, 'alice');
    const isAdmin = async (caller: Caller) =>
      ((await api(t, caller, 'get', 'me').expect(200)).body as { data: { is_admin: boolean } }).data.is_admin;
    expectFail(await api(t, alice, 'get', 'audit'), 403, 'Admin privileges required');
    expectFail(await api(t, boss, 'get', 'audit'), 403, MESSAGES.adminNeedsEnrolment);
    // No admin power anywhere until then: not on user routes either (the pending list, the admin views).
    expectFail(
      await api(t, boss, 'get', 'community-plugins/?status=pending'),
      403,
      'Admin privileges required',
    );
    expect(await isAdmin(boss)).toBe(false);
    // A pending enrolment is not enough.
    const secret = (
      (await api(t, boss, 'post', 'account/totp').send({ current_password: boss.password }).expect(201))
        .body as { data: { secret: string } }
    ).data.secret;
    expectFail(await api(t, boss, 'get', 'audit'), 403, MESSAGES.adminNeedsEnrolment);
    await api(t, boss, 'post', 'account/totp/confirm')
      .send({ otp: await codeAt(secret, t.clock.now()) })
      .expect(200);
    expect((await api(t, boss, 'get', 'audit')).status).toBe(200);
    expect((await api(t, boss, 'get', 'community-plugins/?status=pending')).status).toBe(200);
    expect(await isAdmin(boss)).toBe(true);
    // The same rule for an access token of the admin's.
    const pat = (
      (
        await api(t, boss, 'post', 'account/tokens')
          .send({ name: 'ci', scopes: ['review'] })
          .expect(201)
      ).body as {
        data: { token: string };
      }
    ).data.token;
    expect((await api(t, { token: pat }, 'get', 'audit')).status).toBe(200);
    // Turned off again, the admin routes close again.
    t.clock.advance(STEP_MS);
    await api(t, boss, 'delete', 'account/totp')
      .send({ otp: await codeAt(secret, t.clock.now()) })
      .expect(200);
    expectFail(await api(t, boss, 'get', 'audit'), 403, MESSAGES.adminNeedsEnrolment);
    expectFail(await api(t, { token: pat }, 'get', 'audit'), 403, MESSAGES.adminNeedsEnrolment);
  });
});

describe('wrong codes are guesses: the same limits as wrong passwords (RATE_LIMIT=on)', () => {
  const app = secondFactorApp(() => ({ RATE_LIMIT: 'on' }));
  let port: number;
  let next = 0;
  const address = () => {
    next += 1;
    return `127.0.${Math.floor(next / 250)}.${(next % 250) + 2}`;
  };
  beforeAll(async () => {
    const server = app.t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  it(`gives 50 wrong codes sent at once from one address ${PAIR_FAILURE_LIMIT.limit} answers, counts them toward the account's lock, which a right code then meets`, async () => {
    const t = app.t;
    t.clock.freeze();
    const lena = await signUpAs(t, app.smtp, 'lena');
    const secret = (
      (await api(t, lena, 'post', 'account/totp').send({ current_password: lena.password }).expect(201))
        .body as { data: { secret: string } }
    ).data.secret;
    await api(t, lena, 'post', 'account/totp/confirm')
      .send({ otp: await codeAt(secret, t.clock.now()) })
      .expect(200);
    t.clock.advance(STEP_MS);
    const right = await codeAt(secret, t.clock.now());
    const wrong = right === '000000' ? '111111' : '000000';
    const attempt = (otp: string, from: string) =>
      post(
        port,
        '/api/v1/login/',
        { emailOrUsername: lena.username, password: lena.password, otp },
        { localAddress: from },
      );

    const stranger = address();
    const answers = await Promise.all(Array.from({ length: 50 }, () => attempt(wrong, stranger)));
    const refused = answers.filter(
      (answer) => (answer.body as { message: unknown }).message === MESSAGES.loginRefused,
    );
    expect(refused).toHaveLength(PAIR_FAILURE_LIMIT.limit);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(50 - PAIR_FAILURE_LIMIT.limit);

    // The rest of the account's hour of failures, 10 per address, then one more attempt locks it.
    const spent = PAIR_FAILURE_LIMIT.limit;
    for (let done = spent; done < ACCOUNT_FAILURE_LIMIT.limit; done += PAIR_FAILURE_LIMIT.limit) {
      const from = address();
      const batch = await Promise.all(
        Array.from({ length: PAIR_FAILURE_LIMIT.limit }, () => attempt(wrong, from)),
      );
      expect(batch.map((answer) => (answer.body as { message: unknown }).message)).toEqual(
        Array(PAIR_FAILURE_LIMIT.limit).fill(MESSAGES.loginRefused),
      );
    }
    const locked = await attempt(right, address());
    expect([locked.status, locked.body]).toEqual([200, invalid]);
  });

  it(`counts a wrong current password at enrolment as a failed login: ${PAIR_FAILURE_LIMIT.limit} per identifier and address shared with login, then 429; past the account's bound it locks`, async () => {
    const t = app.t;
    const nora = await signUpAs(t, app.smtp, 'nora');
    const enrolFrom = (from: string, current_password: string) =>
      post(
        port,
        '/api/v1/account/totp',
        { current_password },
        { localAddress: from, headers: { Authorization: `Bearer ${nora.token}` } },
      );
    const loginFrom = (from: string, password: string) =>
      post(port, '/api/v1/login/', { emailOrUsername: nora.email, password }, { localAddress: from });
    const half = PAIR_FAILURE_LIMIT.limit / 2;
    const first = address();
    for (let i = 0; i < half; i += 1) expect((await loginFrom(first, 'Wr0ng!pass')).body).toEqual(invalid);
    // Sent at once, they cannot overrun the count.
    const answers = await Promise.all(Array.from({ length: half + 3 }, () => enrolFrom(first, 'Wr0ng!pass')));
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      ...Array(half).fill(403),
      ...Array(3).fill(429),
    ]);
    for (const answer of answers)
      expect(answer.body).toEqual(
        fail(answer.status === 403 ? LOGIN_MESSAGES.wrongCurrent : 'Too many requests'),
      );
    expect((await loginFrom(first, nora.password)).status).toBe(429);
    // From elsewhere, the right password enrols.
    expect((await enrolFrom(address(), nora.password)).status).toBe(201);

    // The rest of the account's hour of failures, then the right password meets the lock.
    for (
      let done = PAIR_FAILURE_LIMIT.limit;
      done < ACCOUNT_FAILURE_LIMIT.limit;
      done += PAIR_FAILURE_LIMIT.limit
    ) {
      const from = address();
      const batch = await Promise.all(
        Array.from({ length: PAIR_FAILURE_LIMIT.limit }, () => enrolFrom(from, 'Wr0ng!pass')),
      );
      for (const answer of batch) expect(answer.body).toEqual(fail(LOGIN_MESSAGES.wrongCurrent));
    }
    const locked = await enrolFrom(address(), nora.password);
    expect([locked.status, locked.body]).toEqual([403, fail(LOGIN_MESSAGES.locked)]);
    expect((await loginFrom(address(), nora.password)).body).toEqual(invalid);
    await t.deliverMail();
    await app.smtp.until(
      () =>
        app.smtp.received.some(
          (mail) => mail.to.includes(nora.email) && mail.subject === 'Your account is locked',
        ),
      () => 'no lock mail',
    );
  });

  it(`counts wrong codes on the signed-in routes per user: 50 at once get ${SECOND_FACTOR_FAILURE_LIMIT.limit} answers`, async () => {
    const t = app.t;
    const mia = await signUpAs(t, app.smtp, 'mia');
    await api(t, mia, 'post', 'account/totp').send({ current_password: mia.password }).expect(201);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => api(t, mia, 'post', 'account/totp/confirm').send({ otp: 'abcdef' })),
    );
    expect(answers.filter((answer) => answer.status === 400)).toHaveLength(SECOND_FACTOR_FAILURE_LIMIT.limit);
    const tooMany = answers.filter((answer) => answer.status === 429);
    expect(tooMany).toHaveLength(50 - SECOND_FACTOR_FAILURE_LIMIT.limit);
    expect(tooMany[0].body).toEqual(fail('Too many requests'));
  });
});
