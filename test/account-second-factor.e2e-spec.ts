import { generate } from 'otplib';
import { LOGIN_MESSAGES } from '../src/account-logins/login-messages';
import { SECOND_FACTOR_MESSAGES as MESSAGES } from '../src/second-factor/second-factor-messages';
import { STRONG_PASSWORD } from './helpers/accounts';
import { api, type Caller } from './helpers/client';
import { accountFail, fail } from './helpers/envelopes';
import { signUpAs, svcAdminOn, type SignedInUser } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, type TestApp } from './helpers/test-app';

jest.setTimeout(180_000);

/**
 * Issue 45, parts 3 and 4 together: the logins a user sees and ends, the password change, and
 * the second factor, over HTTP on the real app and database. Codes are made by the test from
 * the enrolment's secret on the app's frozen clock; the test is the balancer (TRUSTED_PROXIES).
 */

const STEP_MS = 30_000;
const NEW_PASSWORD = `N3w${STRONG_PASSWORD}`;
const codeAt = (secret: string, at: Date) =>
  generate({ secret, period: 30, digits: 6, epoch: Math.floor(at.getTime() / 1000) });

interface LoginAnswer {
  id: number;
  client_address: string | null;
  user_agent: string | null;
  current: boolean;
}

describe('logins, the password change and the second factor together', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let counter = 0;
  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { TRUSTED_PROXIES: '127.0.0.1,::1' } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  const someone = () => signUpAs(t, smtp, `both${(counter += 1)}`);
  const nextStep = () => t.clock.advance(STEP_MS);
  const code = (secret: string) => codeAt(secret, t.clock.now());
  const works = async (caller: Caller) => (await api(t, caller, 'get', 'community-plugins/me/')).status;
  const listOf = async (caller: Caller): Promise<LoginAnswer[]> => {
    const answer = await api(t, caller, 'get', 'account/logins');
    expect(answer.status).toBe(200);
    return (answer.body as { data: LoginAnswer[] }).data;
  };
  const logIn = (
    user: SignedInUser,
    options: { password?: string; otp?: string; address?: string; agent?: string } = {},
  ) => {
    const request = t.http().post('/api/v1/login/');
    if (options.address) request.set('X-Forwarded-For', options.address);
    if (options.agent) request.set('User-Agent', options.agent);
    return request.send({
      emailOrUsername: user.username,
      password: options.password ?? user.password,
      ...(options.otp === undefined ? {} : { otp: options.otp }),
    });
  };
  const tokenOf = (answer: { body: { message: unknown } }) => {
    const token = (answer.body.message as { 'jwt-token'?: string })['jwt-token'];
    if (!token) throw new Error(`login failed: ${JSON.stringify(answer.body)}`);
    return { token };
  };
  const changePassword = (caller: Caller, current: string, password = NEW_PASSWORD) =>
    api(t, caller, 'post', 'account/password').send({
      current_password: current,
      password,
      confirm_password: password,
    });
  /** Enrols `user` with the current password; the secret, still pending. */
  const pending = async (user: SignedInUser, caller: Caller = user) =>
    (
      (await api(t, caller, 'post', 'account/totp').send({ current_password: user.password }).expect(201))
        .body as { data: { secret: string } }
    ).data.secret;
  /** Enrolled and confirmed with `caller`'s login; the clock then moves to the next step. */
  const enrolled = async (user: SignedInUser) => {
    const secret = await pending(user);
    await api(t, user, 'post', 'account/totp/confirm')
      .send({ otp: await code(secret) })
      .expect(200);
    nextStep();
    return secret;
  };

  it('an enrolled user changes the password: the current login stays, the others end, and the next login still needs the code', async () => {
    t.clock.freeze();
    const alice = await someone();
    const secret = await enrolled(alice);
    const other = tokenOf(await logIn(alice, { otp: await code(secret) }));
    nextStep();
    const changed = await changePassword(alice, alice.password);
    expect([changed.status, changed.body]).toEqual([200, { status: 'success', data: null }]);
    expect(await works(alice)).toBe(200);
    expect(await works(other)).toBe(401);
    expect((await listOf(alice)).map((login) => login.current)).toEqual([true]);
    // The second factor stays on: the new password alone is asked for the code, the old one is wrong.
    expect((await logIn(alice, { password: NEW_PASSWORD })).body).toEqual(accountFail(MESSAGES.loginRefused));
    expect((await logIn(alice, { otp: await code(secret) })).body).toEqual(
      accountFail('Invalid login credentials'),
    );
    const again = await logIn(alice, { password: NEW_PASSWORD, otp: await code(secret) });
    expect(again.body.status).toBe('success');
    expect(await works(tokenOf(again))).toBe(200);
  });

  it('turning the second factor on ends every other login: the list then shows only the current one', async () => {
    t.clock.freeze();
    const bob = await someone();
    const laptop = tokenOf(await logIn(bob, { address: '203.0.113.5', agent: 'Laptop/1.0' }));
    tokenOf(await logIn(bob, { address: '203.0.113.6', agent: 'Phone/1.0' }));
    expect(await listOf(bob)).toHaveLength(3);
    await enrolled(bob);
    const list = await listOf(bob);
    expect(list.map((login) => login.current)).toEqual([true]);
    expect(await works(laptop)).toBe(401);
    // Begun from one login and confirmed from another: the confirming one stays, the other ends.
    const carl = await someone();
    const phone = tokenOf(await logIn(carl));
    const secret = await pending(carl, phone);
    await api(t, carl, 'post', 'account/totp/confirm')
      .send({ otp: await code(secret) })
      .expect(200);
    expect(await works(phone)).toBe(401);
    expect((await listOf(carl)).map((login) => login.current)).toEqual([true]);
  });

  it('shows a login made with a code like any other, and logout-everywhere ends logins made with codes', async () => {
    t.clock.freeze();
    const dora = await someone();
    const secret = await enrolled(dora);
    const withCode = tokenOf(
      await logIn(dora, { otp: await code(secret), address: '198.51.100.7', agent: 'Authenticator/2.0' }),
    );
    nextStep();
    const second = tokenOf(await logIn(dora, { otp: await code(secret), address: '2001:DB8::7' }));
    nextStep();
    const list = await listOf(withCode);
    expect(list.map(({ client_address, current }) => ({ client_address, current }))).toEqual([
      { client_address: '2001:db8::7', current: false },
      { client_address: '198.51.100.7', current: true },
      { client_address: '127.0.0.1', current: false },
    ]);
    expect(list[1].user_agent).toBe('Authenticator/2.0');
    const ended = await api(t, withCode, 'post', 'account/logout-everywhere').expect(200);
    expect(ended.body).toEqual({ status: 'success', data: { ended: 2 } });
    expect(await works(second)).toBe(401);
    expect(await works(dora)).toBe(401);
    expect(await works(withCode)).toBe(200);
    expect((await listOf(withCode)).map((login) => login.current)).toEqual([true]);
    // The second factor is untouched by it: the next login still needs a code.
    expect((await logIn(dora)).body).toEqual(accountFail(MESSAGES.loginRefused));
    expect((await logIn(dora, { otp: await code(secret) })).body.status).toBe('success');
  });

  it('logout-everywhere racing 10 logins with one code: one gets in, and it is either ended or listed', async () => {
    t.clock.freeze();
    const emma = await someone();
    const secret = await enrolled(emma);
    const otp = await code(secret);
    const [ended, ...logins] = await Promise.all([
      api(t, emma, 'post', 'account/logout-everywhere'),
      ...Array.from({ length: 10 }, () => logIn(emma, { otp })),
    ]);
    expect(ended.status).toBe(200);
    const passed = logins.filter((answer) => answer.body.status === 'success');
    expect(passed).toHaveLength(1);
    for (const answer of logins.filter((each) => each.body.status !== 'success'))
      expect(answer.body).toEqual(accountFail(MESSAGES.loginRefused));
    const status = await works(tokenOf(passed[0]));
    expect((await listOf(emma)).length).toBe(status === 200 ? 2 : 1);
    expect((ended.body as { data: { ended: number } }).data.ended).toBe(status === 200 ? 0 : 1);
  });

  it('a confirmation racing a password change of the same login: both take effect, in either order', async () => {
    t.clock.freeze();
    for (let round = 0; round < 4; round += 1) {
      const finn = await someone();
      const other = tokenOf(await logIn(finn));
      const secret = await pending(finn);
      const next = `${NEW_PASSWORD}${round}`;
      const [confirmed, changed] = await Promise.all([
        api(t, finn, 'post', 'account/totp/confirm').send({ otp: await code(secret) }),
        changePassword(finn, finn.password, next),
      ]);
      expect([confirmed.status, changed.status]).toEqual([200, 200]);
      expect(await works(finn)).toBe(200);
      expect(await works(other)).toBe(401);
      expect((await listOf(finn)).map((login) => login.current)).toEqual([true]);
      nextStep();
      expect((await logIn(finn, { password: next })).body).toEqual(accountFail(MESSAGES.loginRefused));
      expect((await logIn(finn, { password: next, otp: await code(secret) })).body.status).toBe('success');
      nextStep();
    }
  });

  it('a confirmation racing a password change from another login: the first to commit ends the other, which changes nothing', async () => {
    t.clock.freeze();
    for (let round = 0; round < 4; round += 1) {
      const gus = await someone();
      const laptop = tokenOf(await logIn(gus));
      const secret = await pending(gus);
      const next = `${NEW_PASSWORD}${round}`;
      const [confirmed, changed] = await Promise.all([
        api(t, gus, 'post', 'account/totp/confirm').send({ otp: await code(secret) }),
        changePassword(laptop, gus.password, next),
      ]);
      nextStep();
      const on = (
        (await t.dataSource.query('SELECT enabled_at FROM user_totp WHERE user_id = ?', [gus.id])) as Array<{
          enabled_at: unknown;
        }>
      ).some((row) => row.enabled_at !== null);
      const observed = {
        confirm: [confirmed.status, confirmed.status === 200 ? null : confirmed.body],
        change: [changed.status, changed.body],
        on,
        enroller: await works(gus),
        laptop: await works(laptop),
        newPassword: (await logIn(gus, { password: next })).body.message as unknown,
      };
      expect([
        // Turned on first: the laptop's login ended, so its change found it gone.
        {
          confirm: [200, null],
          change: [401, fail('Unauthorized')],
          on: true,
          enroller: 200,
          laptop: 401,
          newPassword: 'Invalid login credentials',
        },
        // Changed first: the enroller's login ended, so its confirmation found it gone.
        {
          confirm: [401, fail('Unauthorized')],
          change: [200, { status: 'success', data: null }],
          on: false,
          enroller: 401,
          laptop: 200,
          newPassword: expect.objectContaining({ 'jwt-token': expect.any(String) }),
        },
      ]).toContainEqual(observed);
      nextStep();
    }
  });

  it('after svc-admin’s reset nothing of either part is left: no login, no factor; the password alone logs in and is listed', async () => {
    t.clock.freeze();
    const hana = await someone();
    await enrolled(hana);
    expect((await svcAdminOn(t, ['second-factor', 'reset', hana.email])).code).toBe(0);
    expect(await works(hana)).toBe(401);
    const fresh = tokenOf(await logIn(hana));
    expect((await listOf(fresh)).map((login) => login.current)).toEqual([true]);
    // And the password change with it needs no code.
    expect((await changePassword(fresh, hana.password)).status).toBe(200);
    // Nor does the enrolment: it asks for the password now in use.
    expect(
      (await api(t, fresh, 'post', 'account/totp').send({ current_password: hana.password })).body,
    ).toEqual(fail(LOGIN_MESSAGES.wrongCurrent));
  });
});
