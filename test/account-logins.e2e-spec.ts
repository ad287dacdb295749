import { createHash } from 'node:crypto';
import { LOGIN_MESSAGES } from '../src/account-logins/account-logins.service';
import { USER_AGENT_MAX_LENGTH } from '../src/account-logins/login-seen';
import { TOKEN_MANAGEMENT_REFUSED, TOKEN_REFUSED } from '../src/common/access-scopes';
import { ACCOUNT_FAILURE_LIMIT, PAIR_FAILURE_LIMIT } from '../src/rate-limit/account-rate-limit';
import { LOGIN_LAST_USED_RESOLUTION_MS } from '../src/users/logins.repository';
import { STRONG_PASSWORD, type TestUser } from './helpers/accounts';
import { api, type Caller } from './helpers/client';
import { accountFail, expectFail, fail } from './helpers/envelopes';
import { queriesDuring } from './helpers/logged-queries';
import { signUpAs, type SignedInUser } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, type TestApp } from './helpers/test-app';

/**
 * Issue 45, part 3: the logins a user can see and end, and the password change with the
 * current password, over HTTP on the real app and database. The test is the balancer
 * (TRUSTED_PROXIES holds loopback) and says who its clients are in X-Forwarded-For.
 */

const NEW_PASSWORD = `N3w${STRONG_PASSWORD}`;
const PASSWORD_SUBJECT = 'Your password was changed';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface LoginAnswer {
  id: number;
  created_at: string;
  last_used_at: string | null;
  expires_at: string;
  client_address: string | null;
  user_agent: string | null;
  current: boolean;
}

function accountLoginsSpec(env: Record<string, string>) {
  const smtp = new SmtpSink();
  let t: TestApp;
  let counter = 0;
  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { TRUSTED_PROXIES: '127.0.0.1,::1', ...env } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  /** A new user, signed up (activated, password set by OTP) and logged in once. */
  const someone = () => signUpAs(t, smtp, `logins${(counter += 1)}`);

  /** A password login from `address` with `agent`; the token, or the failure's body. */
  const logIn = async (
    user: TestUser,
    options: { address?: string; agent?: string; password?: string } = {},
  ) => {
    const request = t.http().post('/api/v1/login/');
    if (options.address) request.set('X-Forwarded-For', options.address);
    if (options.agent) request.set('User-Agent', options.agent);
    const answer = await request.send({
      emailOrUsername: user.email,
      password: options.password ?? user.password,
    });
    const token = (answer.body as { message: { 'jwt-token'?: string } }).message['jwt-token'];
    return { token: token ?? null, body: answer.body as unknown };
  };
  const loggedIn = async (user: TestUser, options: { address?: string; agent?: string } = {}) => {
    const { token, body } = await logIn(user, options);
    if (!token) throw new Error(`login failed: ${JSON.stringify(body)}`);
    return { token };
  };
  const listOf = async (caller: Caller): Promise<LoginAnswer[]> => {
    const answer = await api(t, caller, 'get', 'account/logins');
    expect(answer.status).toBe(200);
    return (answer.body as { data: LoginAnswer[] }).data;
  };
  /** The statements that write a login's last use while `work` runs (and the app's statements it started). */
  const writesOfLastUse = async (work: () => Promise<unknown>): Promise<string[]> => {
    const queries = await queriesDuring(t.dataSource, async () => {
      await work();
      // A write the requests started would have been issued by the time one more request is answered.
      await api(t, null, 'get', 'health').catch(() => undefined);
    });
    return queries.filter((query) => /^UPDATE\W+user_login_tokens\W+SET\W+last_used_at\b/i.test(query));
  };
  const works = async (caller: Caller) => (await api(t, caller, 'get', 'community-plugins/me/')).status;
  const changePassword = (caller: Caller, body: Record<string, string>, address?: string) => {
    const request = api(t, caller, 'post', 'account/password');
    if (address) request.set('X-Forwarded-For', address);
    return request.send(body);
  };
  const change = (user: TestUser, password = NEW_PASSWORD) => ({
    current_password: user.password,
    password,
    confirm_password: password,
  });
  const auditOf = async (action: string, userId: number) =>
    (
      (await t.dataSource.query(
        'SELECT actor_user_id, details FROM audit_log WHERE action = ? AND subject = ? ORDER BY seq',
        [action, `user:${userId}`],
      )) as Array<{ actor_user_id: unknown; details: string }>
    ).map((row) => ({ actor: Number(row.actor_user_id), details: JSON.parse(row.details) as unknown }));
  const makeAccessToken = async (caller: Caller) => {
    const answer = await api(t, caller, 'post', 'account/tokens').send({
      name: 'ci',
      scopes: ['read', 'upload'],
    });
    expect(answer.status).toBe(201);
    return { token: (answer.body as { data: { token: string } }).data.token };
  };

  it('lists the live logins with times, the address through the trusted proxies and the user agent; marks the current one; never a token or its hash', async () => {
    const alice = await someone();
    t.clock.freeze();
    const at = t.clock.now().toISOString();
    const laptop = await loggedIn(alice, { address: '203.0.113.7', agent: 'Laptop/1.0' });
    // What a client writes left of its own address is not believed; an IPv6 client is shown whole.
    const phone = await loggedIn(alice, { address: '198.51.100.99, 2001:DB8:0:0::1', agent: 'Phone/2.0' });
    const long = await loggedIn(alice, { agent: 'x'.repeat(USER_AGENT_MAX_LENGTH + 100) });
    const list = await listOf(phone);
    // A JWT's exp is in whole seconds.
    const expires = new Date(
      (Math.floor(t.clock.now().getTime() / 1000) + t.config.jwt.expiresInSeconds) * 1000,
    ).toISOString();
    expect(list.slice(0, 3)).toEqual([
      {
        id: expect.any(Number),
        created_at: at,
        last_used_at: at,
        expires_at: expires,
        // Straight from loopback, no X-Forwarded-For: the peer, an IPv4-mapped address, as IPv4.
        client_address: '127.0.0.1',
        user_agent: 'x'.repeat(USER_AGENT_MAX_LENGTH),
        current: false,
      },
      {
        id: expect.any(Number),
        created_at: at,
        last_used_at: at,
        expires_at: expires,
        client_address: '2001:db8::1',
        user_agent: 'Phone/2.0',
        current: true,
      },
      {
        id: expect.any(Number),
        created_at: at,
        last_used_at: at,
        expires_at: expires,
        client_address: '203.0.113.7',
        user_agent: 'Laptop/1.0',
        current: false,
      },
    ]);
    // The sign-up's own login, older, is listed after them.
    expect(list).toHaveLength(4);
    expect((await listOf(laptop)).filter((login) => login.current).map((login) => login.id)).toEqual([
      list[2].id,
    ]);
    const text = JSON.stringify(list);
    for (const { token } of [laptop, phone, long, alice]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(sha256(token));
      expect(text).not.toContain(token.split('.')[2]);
    }
    // Another user sees only their own.
    const bob = await someone();
    expect((await listOf(bob)).map((login) => login.current)).toEqual([true]);
  });

  it('notes a use at most once a minute, without a write on every request', async () => {
    const alice = await someone();
    t.clock.freeze();
    const login = await loggedIn(alice);
    const created = t.clock.now();
    const lastUsed = async () => (await listOf(login)).find((each) => each.current)!.last_used_at;
    t.clock.advance(LOGIN_LAST_USED_RESOLUTION_MS / 2);
    expect(await writesOfLastUse(async () => expect(await works(login)).toBe(200))).toEqual([]);
    expect(await lastUsed()).toBe(created.toISOString());
    t.clock.advance(LOGIN_LAST_USED_RESOLUTION_MS / 2 + 1_000);
    const used = t.clock.now().toISOString();
    // One write, which the request does not wait for: the list (itself a use) shows it once it ran.
    expect(await writesOfLastUse(async () => expect(await works(login)).toBe(200))).toHaveLength(1);
    for (let tries = 0; tries < 500 && (await lastUsed()) !== used; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await lastUsed()).toBe(used);
    // Uses within the next minute change nothing, also many at once.
    t.clock.advance(LOGIN_LAST_USED_RESOLUTION_MS - 2_000);
    const uses = () => Promise.all(Array.from({ length: 10 }, () => works(login)));
    expect(await writesOfLastUse(async () => expect(await uses()).toEqual(Array(10).fill(200)))).toEqual([]);
    expect(await lastUsed()).toBe(used);
  });

  it('shows null for what a login from before the columns did not record, and notes its first use', async () => {
    const alice = await someone();
    const old = await loggedIn(alice);
    const oldId = (await listOf(old)).find((login) => login.current)!.id;
    // As the migration leaves a row written before it.
    await t.dataSource.query(
      'UPDATE user_login_tokens SET last_used_at = NULL, client_address = NULL, user_agent = NULL WHERE id = ?',
      [oldId],
    );
    const before = (await listOf(alice)).find((login) => login.id === oldId)!;
    expect([before.last_used_at, before.client_address, before.user_agent]).toEqual([null, null, null]);
    t.clock.freeze();
    expect(await works(old)).toBe(200);
    const used = t.clock.now().toISOString();
    const lastUsed = async () => (await listOf(alice)).find((login) => login.id === oldId)!.last_used_at;
    for (let tries = 0; tries < 500 && (await lastUsed()) !== used; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await lastUsed()).toBe(used);
  });

  it('ends one login: refused at once with the answer of a revoked token, the others stay, another user’s id is unknown, and the end is recorded', async () => {
    const alice = await someone();
    const bob = await someone();
    const laptop = await loggedIn(alice);
    const phone = await loggedIn(alice);
    const laptopId = (await listOf(laptop)).find((login) => login.current)!.id;
    const bobsId = (await listOf(bob))[0].id;
    expectFail(await api(t, alice, 'delete', `account/logins/${bobsId}`), 404, LOGIN_MESSAGES.notFound);
    expectFail(await api(t, alice, 'delete', 'account/logins/999999'), 404, LOGIN_MESSAGES.notFound);
    expectFail(await api(t, alice, 'delete', 'account/logins/007'), 404, LOGIN_MESSAGES.notFound);
    expect(await works(bob)).toBe(200);
    expect((await api(t, phone, 'delete', `account/logins/${laptopId}`).expect(200)).body).toEqual({
      status: 'success',
      data: null,
    });
    expectFail(await api(t, laptop, 'get', 'community-plugins/me/'), 401, 'Unauthorized');
    expect(await works(phone)).toBe(200);
    expect(await works(alice)).toBe(200);
    expect((await listOf(phone)).map((login) => login.id)).not.toContain(laptopId);
    expectFail(await api(t, phone, 'delete', `account/logins/${laptopId}`), 404, LOGIN_MESSAGES.notFound);
    // Its own login too: that is a logout.
    const phoneId = (await listOf(phone)).find((login) => login.current)!.id;
    await api(t, phone, 'delete', `account/logins/${phoneId}`).expect(200);
    expectFail(await api(t, phone, 'get', 'account/logins'), 401, 'Unauthorized');
    expect(await auditOf('login_end', alice.id)).toEqual([
      { actor: alice.id, details: { login_id: laptopId } },
      { actor: alice.id, details: { login_id: phoneId } },
    ]);
    expect(LOGIN_MESSAGES.notFound).toBe('Login not found');
  });

  it('a login ended while 30 requests with it are in flight: each is answered 200 or 401, and every request after the end is 401', async () => {
    const alice = await someone();
    const doomed = await loggedIn(alice);
    const doomedId = (await listOf(doomed)).find((login) => login.current)!.id;
    const answers = await Promise.all([
      ...Array.from({ length: 30 }, () => api(t, doomed, 'get', 'community-plugins/me/')),
      api(t, alice, 'delete', `account/logins/${doomedId}`),
    ]);
    expect(answers.at(-1)!.status).toBe(200);
    for (const answer of answers.slice(0, -1)) expect([200, 401]).toContain(answer.status);
    const after = await Promise.all(Array.from({ length: 10 }, () => works(doomed)));
    expect(after).toEqual(Array(10).fill(401));
  });

  it('logout-everywhere ends every login but the current one; access tokens stay; it is recorded', async () => {
    const alice = await someone();
    const others = await Promise.all([loggedIn(alice), loggedIn(alice), loggedIn(alice)]);
    const pat = await makeAccessToken(alice);
    const bob = await someone();
    const answer = await api(t, alice, 'post', 'account/logout-everywhere').expect(200);
    expect(answer.body).toEqual({ status: 'success', data: { ended: 3 } });
    for (const other of others)
      expectFail(await api(t, other, 'get', 'community-plugins/me/'), 401, 'Unauthorized');
    expect(await works(alice)).toBe(200);
    expect(await works(pat)).toBe(200);
    expect(await works(bob)).toBe(200);
    expect((await listOf(alice)).map((login) => login.current)).toEqual([true]);
    expect((await api(t, alice, 'post', 'account/logout-everywhere').expect(200)).body.data).toEqual({
      ended: 0,
    });
    expect(await auditOf('logout_everywhere', alice.id)).toEqual([
      { actor: alice.id, details: { ended: 3 } },
      { actor: alice.id, details: { ended: 0 } },
    ]);
  });

  it('logout-everywhere racing 10 new logins: each new login is either ended (401, not listed) or lives on (listed), never in between', async () => {
    const alice = await someone();
    const before = await loggedIn(alice);
    const [ended, ...logins] = await Promise.all([
      api(t, alice, 'post', 'account/logout-everywhere'),
      ...Array.from({ length: 10 }, () => logIn(alice)),
    ]);
    expect(ended.status).toBe(200);
    expect(await works(before)).toBe(401);
    const listed = new Set((await listOf(alice)).map((login) => login.id));
    let survivors = 0;
    for (const { token } of logins) {
      expect(token).not.toBeNull();
      const status = await works({ token: token! });
      expect([200, 401]).toContain(status);
      if (status === 200) survivors += 1;
    }
    // Listed: the caller's own login and exactly the new ones that still work.
    expect(listed.size).toBe(1 + survivors);
    expect((ended.body as { data: { ended: number } }).data.ended).toBe(1 + (10 - survivors));
  });

  it('refuses every personal access token: on the logins with the access-token answer, on the password change with its own', async () => {
    const alice = await someone();
    const pat = await makeAccessToken(alice);
    const aliceId = (await listOf(alice))[0].id;
    expectFail(await api(t, pat, 'get', 'account/logins'), 403, TOKEN_REFUSED);
    expectFail(await api(t, pat, 'delete', `account/logins/${aliceId}`), 403, TOKEN_REFUSED);
    expectFail(await api(t, pat, 'post', 'account/logout-everywhere'), 403, TOKEN_REFUSED);
    expectFail(await changePassword(pat, change(alice)), 403, TOKEN_MANAGEMENT_REFUSED);
    expect(await works(alice)).toBe(200);
    // Nothing changed: the old password still logs in.
    expect((await logIn(alice)).token).not.toBeNull();
    // Without a token: 401, as on every other route behind one.
    expectFail(await api(t, null, 'get', 'account/logins'), 401, 'Unauthorized');
    expectFail(await t.http().post('/api/v1/account/password').send(change(alice)), 401, 'Unauthorized');
  });

  it('checks the password change in order, with the register form’s messages for its rules', async () => {
    const alice = await someone();
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, 400, 'Missing current password value'],
      [{ current_password: alice.password, confirm_password: NEW_PASSWORD }, 400, 'Missing password value'],
      [{ current_password: alice.password, password: NEW_PASSWORD }, 400, 'Missing confirm password value'],
      [
        { current_password: 'wrong', password: NEW_PASSWORD, confirm_password: `${NEW_PASSWORD}x` },
        400,
        "Password doesn't match",
      ],
      [
        { current_password: 'wrong', password: 'weak', confirm_password: 'weak' },
        400,
        'Choose a strong password',
      ],
      [
        { current_password: 'Wr0ng!pass', password: NEW_PASSWORD, confirm_password: NEW_PASSWORD },
        403,
        'Current password is incorrect',
      ],
      [
        { current_password: 'x'.repeat(100), password: NEW_PASSWORD, confirm_password: NEW_PASSWORD },
        403,
        'Current password is incorrect',
      ],
    ];
    for (const [body, status, message] of cases)
      expectFail(await changePassword(alice, body), status, message);
    // A form works as JSON does; nothing above changed the password.
    const form = await api(t, alice, 'post', 'account/password')
      .type('form')
      .send(
        `current_password=${encodeURIComponent('Wr0ng!pass')}&password=${encodeURIComponent(NEW_PASSWORD)}&confirm_password=${encodeURIComponent(NEW_PASSWORD)}`,
      );
    expectFail(form, 403, LOGIN_MESSAGES.wrongCurrent);
    expect((await logIn(alice)).token).not.toBeNull();
    expect(LOGIN_MESSAGES).toEqual({
      notFound: 'Login not found',
      missingCurrent: 'Missing current password value',
      missingPassword: 'Missing password value',
      missingConfirm: 'Missing confirm password value',
      mismatch: "Password doesn't match",
      weak: 'Choose a strong password',
      wrongCurrent: 'Current password is incorrect',
      locked:
        'The account is locked: set a new password through the mailed one-time password (/password-reset)',
      changedMeanwhile: 'The password was changed by another request meanwhile; nothing was changed',
    });
  });

  it('changes the password: the current login stays, every other login and access token ends, the owner is mailed, and it is recorded', async () => {
    const alice = await someone();
    const other = await loggedIn(alice);
    const pat = await makeAccessToken(alice);
    const bob = await someone();
    const answer = await changePassword(alice, change(alice));
    expect([answer.status, answer.body]).toEqual([200, { status: 'success', data: null }]);
    expect(await works(alice)).toBe(200);
    expectFail(await api(t, other, 'get', 'community-plugins/me/'), 401, 'Unauthorized');
    expectFail(await api(t, pat, 'get', 'community-plugins/me/'), 401, 'Unauthorized');
    expect(await works(bob)).toBe(200);
    expect((await listOf(alice)).map((login) => login.current)).toEqual([true]);
    // The new password logs in, the old one no longer does.
    expect((await logIn(alice, { password: alice.password })).body).toEqual(
      accountFail('Invalid login credentials'),
    );
    expect((await logIn(alice, { password: NEW_PASSWORD })).token).not.toBeNull();
    // The owner is told, with the reset page for a change that was not theirs.
    await t.deliverMail();
    await smtp.until(
      () => smtp.received.some((mail) => mail.to.includes(alice.email) && mail.subject === PASSWORD_SUBJECT),
      () => 'no password-changed mail',
    );
    const mail = smtp.received.find(
      (each) => each.to.includes(alice.email) && each.subject === PASSWORD_SUBJECT,
    )!;
    expect(mail.text.replace(/\s+/g, ' ')).toContain(
      'Every other login and every access token of the account has been ended.',
    );
    expect(mail.text).toMatch(/\/password-reset/);
    expect(mail.text).not.toContain(NEW_PASSWORD);
    expect(await auditOf('password_change', alice.id)).toEqual([
      { actor: alice.id, details: { ended_access_tokens: 1, ended_logins: 1 } },
    ]);
    const [row] = (await t.dataSource.query('SELECT details FROM audit_log WHERE action = ?', [
      'password_change',
    ])) as Array<{
      details: string;
    }>;
    expect(row.details).not.toContain(NEW_PASSWORD);
  });

  it('two password changes at once with one login: one wins, the other changes nothing, and the login stays', async () => {
    const alice = await someone();
    const [first, second] = await Promise.all([
      changePassword(alice, change(alice, `${NEW_PASSWORD}1`)),
      changePassword(alice, change(alice, `${NEW_PASSWORD}2`)),
    ]);
    const answers = [first, second];
    const won = answers.filter((answer) => answer.status === 200);
    expect(won).toHaveLength(1);
    const lost = answers.find((answer) => answer.status !== 200)!;
    // It read before the winner committed (409), or after it, when its current password was the old one (403).
    expect([
      [409, fail(LOGIN_MESSAGES.changedMeanwhile)],
      [403, fail(LOGIN_MESSAGES.wrongCurrent)],
    ]).toContainEqual([lost.status, lost.body]);
    const winner = first.status === 200 ? `${NEW_PASSWORD}1` : `${NEW_PASSWORD}2`;
    const loser = first.status === 200 ? `${NEW_PASSWORD}2` : `${NEW_PASSWORD}1`;
    expect(await works(alice)).toBe(200);
    expect((await logIn(alice, { password: winner })).token).not.toBeNull();
    expect((await logIn(alice, { password: loser })).token).toBeNull();
    expect(await auditOf('password_change', alice.id)).toHaveLength(1);
  });

  it('two password changes at once from two logins: the first to commit ends the other login, which then changes nothing', async () => {
    const alice = await someone();
    const laptop = await loggedIn(alice);
    const [fromAlice, fromLaptop] = await Promise.all([
      changePassword(alice, change(alice, `${NEW_PASSWORD}1`)),
      changePassword(laptop, change(alice, `${NEW_PASSWORD}2`)),
    ]);
    const statuses = [fromAlice.status, fromLaptop.status];
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    const [winner, loser] = fromAlice.status === 200 ? [alice, laptop] : [laptop, alice];
    const lost = fromAlice.status === 200 ? fromLaptop : fromAlice;
    expect([
      [401, fail('Unauthorized')],
      [403, fail(LOGIN_MESSAGES.wrongCurrent)],
    ]).toContainEqual([lost.status, lost.body]);
    expect(await works(winner)).toBe(200);
    expect(await works(loser)).toBe(401);
    const password = winner === alice ? `${NEW_PASSWORD}1` : `${NEW_PASSWORD}2`;
    expect((await logIn(alice, { password })).token).not.toBeNull();
  });

  it('a password change racing 10 logins with the old password: no token of theirs works after it', async () => {
    const alice = await someone();
    const [changed, ...logins] = await Promise.all([
      changePassword(alice, change(alice)),
      ...Array.from({ length: 10 }, () => logIn(alice)),
    ]);
    expect(changed.status).toBe(200);
    // Each was refused, or got a token that is dead: ended by the change, or recorded after it
    // under the credential generation it read.
    const outcomes = await Promise.all(
      logins.map(async ({ token, body }) => (token === null ? body : await works({ token }))),
    );
    for (const outcome of outcomes) {
      expect([accountFail('Invalid login credentials'), 401]).toContainEqual(outcome);
    }
    expect(await works(alice)).toBe(200);
    expect((await listOf(alice)).map((login) => login.current)).toEqual([true]);
  });

  it('a password change racing the end of its own login from another: exactly one of them takes effect', async () => {
    const alice = await someone();
    const laptop = await loggedIn(alice);
    const aliceId = (await listOf(alice)).find((login) => login.current)!.id;
    const [changed, ended] = await Promise.all([
      changePassword(alice, change(alice)),
      api(t, laptop, 'delete', `account/logins/${aliceId}`),
    ]);
    const observed = {
      change: [changed.status, changed.body] as unknown,
      end: [ended.status, ended.body] as unknown,
      alice: await works(alice),
      laptop: await works(laptop),
      newPasswordLogsIn: (await logIn(alice, { password: NEW_PASSWORD })).token !== null,
      oldPasswordLogsIn: (await logIn(alice)).token !== null,
    };
    expect([
      // The change committed first: it ended the laptop's login, whose end then found it gone.
      {
        change: [200, { status: 'success', data: null }],
        end: [401, fail('Unauthorized')],
        alice: 200,
        laptop: 401,
        newPasswordLogsIn: true,
        oldPasswordLogsIn: false,
      },
      // The end committed first: the change found its login gone and wrote nothing.
      {
        change: [401, fail('Unauthorized')],
        end: [200, { status: 'success', data: null }],
        alice: 401,
        laptop: 200,
        newPasswordLogsIn: false,
        oldPasswordLogsIn: true,
      },
    ]).toContainEqual(observed);
  });
}

describe('logins a user can see and end, and the password change', () => {
  accountLoginsSpec({});
});

describe('the password change counts wrong current passwords as failed logins (RATE_LIMIT=on, limits in the process)', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let carol: SignedInUser;
  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { TRUSTED_PROXIES: '127.0.0.1,::1', RATE_LIMIT: 'on' } });
    alice = await signUpAs(t, smtp, 'guessed');
    carol = await signUpAs(t, smtp, 'locked');
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const wrong = { current_password: 'Wr0ng!pass', password: NEW_PASSWORD, confirm_password: NEW_PASSWORD };
  const changeFrom = (caller: Caller, address: string, body: Record<string, string> = wrong) =>
    api(t, caller, 'post', 'account/password').set('X-Forwarded-For', address).send(body);
  const loginFrom = (user: TestUser, address: string, password: string) =>
    t
      .http()
      .post('/api/v1/login/')
      .set('X-Forwarded-For', address)
      .send({ emailOrUsername: user.email, password });

  it(`shares the ${PAIR_FAILURE_LIMIT.limit} failures per identifier and address with login: then 429, and another address is not affected`, async () => {
    const half = PAIR_FAILURE_LIMIT.limit / 2;
    for (let i = 0; i < half; i += 1) {
      expect((await loginFrom(alice, '203.0.113.10', 'Wr0ng!pass')).body).toEqual(
        accountFail('Invalid login credentials'),
      );
    }
    // Sent at once, they cannot overrun the count.
    const answers = await Promise.all(
      Array.from({ length: half + 3 }, () => changeFrom(alice, '203.0.113.10')),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      ...Array(half).fill(403),
      ...Array(3).fill(429),
    ]);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(refused.body).toEqual(fail('Too many requests'));
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Login naming the email from there is refused too; the right password from elsewhere changes it.
    const login = await loginFrom(alice, '203.0.113.10', alice.password);
    expect([login.status, login.body]).toEqual([429, accountFail('Too many requests')]);
    const right = {
      current_password: alice.password,
      password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    };
    expect((await changeFrom(alice, '203.0.113.11', right)).status).toBe(200);
  });

  it(`locks the account past the ASVS bound of ${ACCOUNT_FAILURE_LIMIT.limit} failures, as login does: one mail, then every password refused`, async () => {
    const perAddress = PAIR_FAILURE_LIMIT.limit;
    const addresses = Array.from(
      { length: ACCOUNT_FAILURE_LIMIT.limit / perAddress },
      (_, i) => `198.51.100.${i + 1}`,
    );
    for (const address of addresses) {
      const answers = await Promise.all(Array.from({ length: perAddress }, () => changeFrom(carol, address)));
      for (const answer of answers) expectFail(answer, 403, LOGIN_MESSAGES.wrongCurrent);
    }
    const right = {
      current_password: carol.password,
      password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    };
    expectFail(await changeFrom(carol, '192.0.2.1', right), 403, LOGIN_MESSAGES.locked);
    expectFail(await changeFrom(carol, '192.0.2.2', right), 403, LOGIN_MESSAGES.locked);
    expect((await loginFrom(carol, '192.0.2.3', carol.password)).body).toEqual(
      accountFail('Invalid login credentials'),
    );
    await t.deliverMail();
    await smtp.until(
      () =>
        smtp.received.some(
          (mail) => mail.to.includes(carol.email) && mail.subject === 'Your account is locked',
        ),
      () => 'no lock mail',
    );
    expect(
      smtp.received.filter(
        (mail) => mail.to.includes(carol.email) && mail.subject === 'Your account is locked',
      ),
    ).toHaveLength(1);
    // The login itself is not ended by the lock.
    expect((await api(t, carol, 'get', 'community-plugins/me/')).status).toBe(200);
  });
});
