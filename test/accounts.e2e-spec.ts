import bcrypt from 'bcryptjs';
import { createHash, createHmac } from 'node:crypto';
import {
  activationKey,
  login,
  mailedOtp as mailedOtpOf,
  newUser,
  register,
  signUp,
  STRONG_PASSWORD,
} from './helpers/accounts';
import { accountFail, okMessage as ok } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { appLog, createTestApp, TestApp } from './helpers/test-app';

describe('accounts', () => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SERVER_ADDR: 'svc.example.test', FRONTEND_PORT: '8443' } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => {
    smtp.rejectAll = false;
    t.clock.reset();
  });

  const post = (path: string, body: Record<string, string>) => t.http().post(`/api/v1/${path}`).send(body);

  describe('POST /api/v1/register/', () => {
    const valid = {
      username: 'alice',
      email: 'alice@example.com',
      password: STRONG_PASSWORD,
      confirm_password: STRONG_PASSWORD,
    };
    const without = (key: keyof typeof valid) => {
      const copy: Record<string, string> = { ...valid };
      delete copy[key];
      return copy;
    };

    it.each([
      ['username missing', without('username'), 'Missing username value'],
      ['email missing', without('email'), 'Missing email value'],
      ['password missing', without('password'), 'Missing password value'],
      ['confirm_password missing', without('confirm_password'), 'Missing confirm password value'],
      ['passwords differ', { ...valid, confirm_password: 'Other!Passw0rd' }, "Password doesn't match"],
      ['email malformed', { ...valid, email: 'alice@' }, 'Choose a valid email'],
      [
        'password weak',
        { ...valid, password: 'weakpass', confirm_password: 'weakpass' },
        'Choose a strong password',
      ],
    ])('%s -> %s', async (_, body, message) => {
      const response = await post('register/', body).expect(200);
      expect(response.body).toEqual(accountFail(message));
    });

    it('applies the checks in the spec order: the first failing one decides', async () => {
      await register(t, { username: 'taken', email: 'taken@example.com', password: STRONG_PASSWORD });
      const cases: Array<[Record<string, string>, string]> = [
        [{ email: 'bad', password: 'x' }, 'Missing username value'],
        [{ username: 'u', password: 'x', confirm_password: 'y' }, 'Missing email value'],
        [{ username: 'u', email: 'bad', confirm_password: 'y' }, 'Missing password value'],
        [{ username: 'u', email: 'bad', password: 'x' }, 'Missing confirm password value'],
        [{ username: 'taken', email: 'bad', password: 'x', confirm_password: 'y' }, "Password doesn't match"],
        [
          { username: 'taken', email: 'bad', password: 'weak', confirm_password: 'weak' },
          'Choose a valid email',
        ],
        [
          { username: 'taken', email: 'taken@example.com', password: 'weak', confirm_password: 'weak' },
          'Choose a strong password',
        ],
        [{ ...valid, username: 'taken', email: 'taken@example.com' }, 'Username already exists'],
        [{ ...valid, username: 'TAKEN' }, 'Username already exists'],
        [{ ...valid, username: 'fresh', email: 'taken@example.com' }, 'Email already exists'],
        [{ ...valid, username: 'fresh', email: 'Taken@Example.com' }, 'Email already exists'],
      ];
      for (const [body, message] of cases) {
        expect((await post('register/', body).expect(200)).body).toEqual(accountFail(message));
      }
    });

    it('refuses a password that bcrypt would cut (over 72 bytes) as not strong', async () => {
      const long = 'Aa1!' + 'é'.repeat(35); // 39 characters, 74 bytes
      const response = await post('register/', {
        ...valid,
        username: 'longpw',
        email: 'longpw@example.com',
        password: long,
        confirm_password: long,
      });
      expect(response.body).toEqual(accountFail('Choose a strong password'));
    });

    it('refuses an unusable username with its own message', async () => {
      const response = await post('register/', {
        ...valid,
        username: 'x'.repeat(65),
        email: 'longname@example.com',
      });
      expect(response.body).toEqual(accountFail('Choose a valid username'));
    });

    it('accepts ordinary addresses and refuses malformed ones', async () => {
      for (const email of ['john.doe@mail.example.com', 'a+b@ex.io']) {
        const username = email.replace(/\W/g, '');
        expect((await post('register/', { ...valid, username, email }).expect(200)).body).toEqual(
          ok('User created successfully'),
        );
      }
      for (const email of ['plain', 'a@b', 'a@@b.com', 'a b@c.com', '.a@b.com', 'a@b..com', 'a@-b.com']) {
        expect((await post('register/', { ...valid, username: 'x1', email }).expect(200)).body).toEqual(
          accountFail('Choose a valid email'),
        );
      }
    });

    it('creates an inactive user with a bcrypt hash and a base32 OTP secret', async () => {
      const user = newUser('stored');
      await register(t, user);
      const [row] = (await t.dataSource.query(
        'SELECT password, is_active, otp_secret_key FROM users WHERE name = ?',
        [user.username],
      )) as Array<{ password: string; is_active: unknown; otp_secret_key: string }>;
      expect(row.password).not.toContain(user.password);
      expect(row.password).toMatch(/^\$2[aby]\$04\$/);
      expect(await bcrypt.compare(user.password, row.password)).toBe(true);
      expect(Number(row.is_active)).toBe(0);
      expect(row.otp_secret_key).toMatch(/^[A-Z2-7]{16,}=*$/);
      expect((await post('login/', { emailOrUsername: user.email, password: user.password })).body).toEqual(
        accountFail('Your account is not active'),
      );
    });

    it('reads parameters from the query string, urlencoded, multipart and JSON bodies', async () => {
      const byQuery = newUser('query');
      await t
        .http()
        .post('/api/v1/register/')
        .query({
          username: byQuery.username,
          email: byQuery.email,
          password: STRONG_PASSWORD,
          confirm_password: STRONG_PASSWORD,
        })
        .expect(200, ok('User created successfully'));
      const byForm = newUser('form');
      await t
        .http()
        .post('/api/v1/register/')
        .type('form')
        .send({
          username: byForm.username,
          email: byForm.email,
          password: STRONG_PASSWORD,
          confirm_password: STRONG_PASSWORD,
        })
        .expect(200, ok('User created successfully'));
      const byMultipart = newUser('multipart');
      await t
        .http()
        .post('/api/v1/register/')
        .field('username', byMultipart.username)
        .field('email', byMultipart.email)
        .field('password', STRONG_PASSWORD)
        .field('confirm_password', STRONG_PASSWORD)
        .expect(200, ok('User created successfully'));
      const byJson = newUser('json');
      await t
        .http()
        .post('/api/v1/register/')
        .set('content-type', 'application/json')
        .send(
          JSON.stringify({
            username: byJson.username,
            email: byJson.email,
            password: STRONG_PASSWORD,
            confirm_password: STRONG_PASSWORD,
          }),
        )
        .expect(200, ok('User created successfully'));
    });

    it('answers a malformed JSON body with 400, not 500', async () => {
      const response = await t
        .http()
        .post('/api/v1/register/')
        .set('content-type', 'application/json')
        .send('{"username":');
      expect(response.status).toBe(400);
      expect(response.body).toEqual(accountFail('Malformed request body'));
    });
  });

  describe('POST /api/v1/login/', () => {
    it.each([
      [{ password: 'x' }, 'Missing email or username value'],
      [{}, 'Missing email or username value'],
      [{ emailOrUsername: 'someone' }, 'Missing password value'],
      [{ emailOrUsername: 'nobody-here', password: STRONG_PASSWORD }, 'Invalid login credentials'],
    ])('%j -> %s', async (body, message) => {
      expect((await post('login/', body).expect(200)).body).toEqual(accountFail(message));
    });

    it('says "not active" only when the password was right', async () => {
      const user = newUser('inactive');
      await register(t, user);
      expect(
        (await post('login/', { emailOrUsername: user.username, password: 'Wr0ng!Password' })).body,
      ).toEqual(accountFail('Invalid login credentials'));
      expect(
        (await post('login/', { emailOrUsername: user.username, password: user.password })).body,
      ).toEqual(accountFail('Your account is not active'));
    });

    it('finds the user by email, then by name, and refuses a wrong password', async () => {
      const user = await signUp(t, smtp, 'both');
      for (const emailOrUsername of [user.email, user.username]) {
        const response = await post('login/', { emailOrUsername, password: user.password }).expect(200);
        expect(response.body.status).toBe('success');
        expect(typeof response.body.message['jwt-token']).toBe('string');
        expect(response.body.data).toEqual({ status: 'success', message: response.body.message });
      }
      expect(
        (await post('login/', { emailOrUsername: user.email, password: user.password + 'x' })).body,
      ).toEqual(accountFail('Invalid login credentials'));
    });

    it('signs a JWT with user_id, username, exp = iat + lifetime and a jti, and stores only its hash', async () => {
      const user = await signUp(t, smtp, 'jwt');
      const token = await login(t, user);
      const [header, payload] = token
        .split('.')
        .slice(0, 2)
        .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
      const [row] = (await t.dataSource.query('SELECT id FROM users WHERE name = ?', [
        user.username,
      ])) as Array<{ id: number }>;
      expect(header.alg).toBe('HS256');
      expect(payload).toEqual({
        user_id: Number(row.id),
        username: user.username,
        iat: expect.any(Number),
        exp: payload.iat + 86400,
        jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      expect(Math.abs(payload.iat - Date.now() / 1000)).toBeLessThan(60);
      const records = (await t.dataSource.query(
        'SELECT token_hash FROM user_login_tokens WHERE user_id = ?',
        [row.id],
      )) as Array<{ token_hash: string }>;
      const hash = createHash('sha256').update(token).digest('hex');
      expect(records.map((record) => record.token_hash)).toContain(hash);
      expect(JSON.stringify(records)).not.toContain(token);
    });
  });

  describe('GET /api/v1/logout/ and the token guard', () => {
    const logout = (authorization?: string) => {
      const call = t.http().get('/api/v1/logout/');
      return authorization === undefined ? call : call.set('Authorization', authorization);
    };

    it('answers a missing Authorization header with HTTP 400 Invalid Token', async () => {
      const response = await logout();
      expect(response.status).toBe(400);
      expect(response.body).toEqual(accountFail('Invalid Token'));
    });

    it('logs out, after which the same token is refused with 401', async () => {
      const user = await signUp(t, smtp, 'logout');
      expect((await logout(`Bearer ${user.token}`).expect(200)).body).toEqual(ok('Logged out'));
      const again = await logout(`Bearer ${user.token}`);
      expect(again.status).toBe(401);
      expect(again.body).toEqual(accountFail('Unauthorized'));
    });

    it('takes the scheme word in any case and the token as the second part', async () => {
      const user = await signUp(t, smtp, 'scheme');
      expect((await logout(`bearer   ${user.token}`).expect(200)).body).toEqual(ok('Logged out'));
    });

    it('refuses malformed, badly signed, wrong-algorithm, unsigned, expired and inactive-user tokens with 401', async () => {
      const user = await signUp(t, smtp, 'guard');
      const [header, payload, signature] = user.token.split('.');
      const forged = (changes: object, alg = 'HS256') => {
        const head = Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url');
        const body = Buffer.from(
          JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), ...changes }),
        ).toString('base64url');
        return `${head}.${body}`;
      };
      const sign = (unsigned: string, algorithm: string, secret = t.config.jwt.secret) =>
        `${unsigned}.${createHmac(algorithm, secret).update(unsigned).digest('base64url')}`;
      t.clock.advance(-3 * 86400 * 1000);
      const expired = await login(t, user);
      t.clock.reset();
      const candidates = [
        'garbage',
        `${header}.${payload}`,
        `${header}.${payload}.${signature.slice(0, -2)}xx`,
        sign(forged({}), 'sha256', 'another-secret-another-secret-another'),
        sign(forged({}, 'HS384'), 'sha384'),
        `${forged({}, 'none')}.`,
        sign(forged({ user_id: 999999 }), 'sha256'),
        expired,
      ];
      for (const token of candidates) {
        const response = await logout(`Bearer ${token}`);
        expect([token, response.status, response.body]).toEqual([token, 401, accountFail('Unauthorized')]);
      }
      // The token is the header's second part whatever the scheme word; a bare token names the form.
      expect((await logout(user.token)).body).toEqual(
        accountFail('Authorization header must be "Bearer <token>"'),
      );
      await t.dataSource.query('UPDATE users SET is_active = ? WHERE name = ?', [false, user.username]);
      expect((await logout(`Bearer ${user.token}`)).body).toEqual(accountFail('Unauthorized'));
    });
  });

  describe('email confirmation', () => {
    it('answers a missing email with Missing email value', async () => {
      expect((await post('generate/confirm_email/', {}).expect(200)).body).toEqual(
        accountFail('Missing email value'),
      );
    });

    it('answers an unknown email like a known one and sends nothing', async () => {
      smtp.clear();
      expect((await post('generate/confirm_email/', { email: 'ghost@example.com' })).body).toEqual(
        ok('Email send successful'),
      );
      await t.deliverMail();
      expect(smtp.received).toHaveLength(0);
    });

    it('mails an HTML Account Activation with a one-hour link and no text of the registrant', async () => {
      const user = newUser('mailme');
      await register(t, user);
      expect((await post('generate/confirm_email/', { email: user.email })).body).toEqual(
        ok('Email send successful'),
      );
      await t.deliverMail();
      const mail = smtp.lastTo(user.email)!;
      expect(mail.subject).toBe('Account Activation');
      expect(mail.from).toBe('svc@test.local');
      expect(mail.html).toContain('Hello,');
      expect(mail.html).not.toContain(user.username);
      expect(mail.html).toContain('The links expire in 1 hour.');
      const key = await activationKey(t, smtp, user.email);
      expect(mail.html).toContain('An account was registered with this email address.');
      expect(mail.html).toContain(`http://svc.example.test:8443/email-verify/${key}`);
      expect(mail.html).toContain('"Confirm my email address"');
      expect(mail.html).toContain(`http://svc.example.test:8443/email-claim/${key}`);
      expect(mail.html).toContain('"I did not register: secure this address"');
      const records = (await t.dataSource.query(
        'SELECT c.key_value, c.expiration_time FROM email_confirmation c JOIN users u ON u.email_key = c.email_key WHERE u.name = ?',
        [user.username],
      )) as Array<{ key_value: string }>;
      expect(records.map((record) => record.key_value)).toEqual([key]);
    });

    it('replaces earlier keys, verifies once, and activates the user', async () => {
      const user = newUser('verify');
      await register(t, user);
      await post('generate/confirm_email/', { email: user.email });
      const first = await activationKey(t, smtp, user.email);
      await post('generate/confirm_email/', { email: user.email });
      const second = await activationKey(t, smtp, user.email);
      expect(second).not.toBe(first);
      expect((await t.http().get(`/api/v1/verify/confirm_email/${first}`)).body).toEqual(ok('Invalid Link'));
      expect((await t.http().get(`/api/v1/verify/confirm_email/${second}`).expect(200)).body).toEqual(
        ok('Email Verified'),
      );
      expect((await t.http().get(`/api/v1/verify/confirm_email/${second}`)).body).toEqual(ok('Invalid Link'));
      // The contract's flow: the password chosen at registration logs in.
      expect(typeof (await login(t, user))).toBe('string');
    });

    it('answers an unknown key with Invalid Link', async () => {
      expect(
        (await t.http().get('/api/v1/verify/confirm_email/00000000-0000-4000-8000-000000000000').expect(200))
          .body,
      ).toEqual(ok('Invalid Link'));
      expect(
        (
          await t
            .http()
            .get(`/api/v1/verify/confirm_email/${'z'.repeat(500)}`)
            .expect(200)
        ).body,
      ).toEqual(ok('Invalid Link'));
    });

    it('answers a key older than one hour with Link Expired and the email, and does not activate', async () => {
      const user = newUser('expire');
      await register(t, user);
      await post('generate/confirm_email/', { email: user.email });
      const key = await activationKey(t, smtp, user.email);
      t.clock.advance(60 * 60 * 1000 - 5_000);
      t.clock.advance(10_000);
      expect((await t.http().get(`/api/v1/verify/confirm_email/${key}`)).body).toEqual(
        ok('Link Expired', { email: user.email }),
      );
      t.clock.reset();
      expect(
        (await post('login/', { emailOrUsername: user.username, password: user.password })).body,
      ).toEqual(accountFail('Your account is not active'));
    });

    it('accepts a key just before its hour is up', async () => {
      const user = newUser('justintime');
      await register(t, user);
      await post('generate/confirm_email/', { email: user.email });
      t.clock.advance(60 * 60 * 1000 - 5_000);
      expect(
        (await t.http().get(`/api/v1/verify/confirm_email/${await activationKey(t, smtp, user.email)}`)).body,
      ).toEqual(ok('Email Verified'));
    });

    it('delays a mail SMTP refuses instead of losing it: the request succeeds and the link arrives once SMTP takes it', async () => {
      const user = newUser('smtpfail');
      await register(t, user);
      smtp.rejectAll = true;
      expect((await post('generate/confirm_email/', { email: user.email }).expect(200)).body).toEqual(
        ok('Email send successful'),
      );
      await t.deliverMail();
      expect(smtp.lastTo(user.email)).toBeUndefined();
      smtp.rejectAll = false;
      // The next attempt waits for its backoff (5 s, with jitter), on the app's clock.
      await t.deliverMail();
      expect(smtp.lastTo(user.email)).toBeUndefined();
      t.clock.advance(10_000);
      const key = await activationKey(t, smtp, user.email);
      expect(smtp.received.filter((mail) => mail.to.includes(user.email))).toHaveLength(1);
      expect((await t.http().get(`/api/v1/verify/confirm_email/${key}`)).body).toEqual(ok('Email Verified'));
    });
  });

  describe('OTP and new password', () => {
    const mailedOtp = (email: string) => mailedOtpOf(t, smtp, email);
    const wrong = (otp: string) => String((Number(otp) + 1) % 1_000_000).padStart(6, '0');

    it('answers an unknown user on generation and verification', async () => {
      expect((await post('generate/otp/', { emailOrUsername: 'nobody' })).body).toEqual(
        accountFail("Username / Email doesn't exist"),
      );
      expect((await post('generate/otp/', {})).body).toEqual(accountFail("Username / Email doesn't exist"));
      expect((await post('verify/otp/', { emailOrUsername: 'nobody', otp: '123456' })).body).toEqual(
        accountFail("Username / Email doesn't exist"),
      );
    });

    it('mails a 6-digit OTP that expires in 5 minutes and verifies it, by email or by name', async () => {
      const user = await signUp(t, smtp, 'otp');
      expect((await post('generate/otp/', { emailOrUsername: user.username }).expect(200)).body).toEqual(
        ok('Otp Send Successful'),
      );
      const otp = await mailedOtp(user.email);
      expect(smtp.lastTo(user.email)!.html).toMatch(/expires in 5 minutes/);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp }).expect(200)).body).toEqual(
        ok('OTP Verified'),
      );
      expect((await post('verify/otp/', { emailOrUsername: user.username, otp })).body).toEqual(
        ok('OTP Verified'),
      );
      expect((await post('verify/otp/', { emailOrUsername: user.username, otp: wrong(otp) })).body).toEqual(
        accountFail('Invalid OTP'),
      );
      expect((await post('verify/otp/', { emailOrUsername: user.username })).body).toEqual(
        accountFail("Username / Email doesn't exist"),
      );
    });

    it('refuses an OTP once its 300-second step is over', async () => {
      const user = await signUp(t, smtp, 'otpexp');
      await post('generate/otp/', { emailOrUsername: user.email });
      const otp = await mailedOtp(user.email);
      t.clock.advance(300_000);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        accountFail('Invalid OTP'),
      );
    });

    it('follows the new-password rules and messages', async () => {
      const user = await signUp(t, smtp, 'newpw');
      await post('generate/otp/', { emailOrUsername: user.email });
      const otp = await mailedOtp(user.email);
      const newPassword = 'N3w!Password';
      expect(
        (await post('new-password/', { password: 'weak', emailOrUsername: user.email, otp })).body,
      ).toEqual(accountFail('Choose a strong password'));
      expect((await post('new-password/', { emailOrUsername: user.email, otp })).body).toEqual(
        accountFail('Password Change Unsuccessful'),
      );
      expect(
        (await post('new-password/', { password: newPassword, emailOrUsername: user.email })).body,
      ).toEqual(accountFail('Password Change Unsuccessful'));
      expect((await post('new-password/', { password: newPassword, otp })).body).toEqual(
        accountFail('Password Change Unsuccessful'),
      );
      expect(
        (await post('new-password/', { password: newPassword, emailOrUsername: 'nobody', otp })).body,
      ).toEqual(accountFail('Password Change Unsuccessful'));
      expect(
        (await post('new-password/', { password: newPassword, emailOrUsername: user.email, otp: wrong(otp) }))
          .body,
      ).toEqual(accountFail('Invalid OTP'));
      expect(
        (await post('new-password/', { password: newPassword, emailOrUsername: user.email, otp }).expect(200))
          .body,
      ).toEqual(ok('Password Change Successful'));

      // The old password and every token of it are gone; the used OTP cannot be replayed.
      expect(
        (await t.http().get('/api/v1/logout/').set('Authorization', `Bearer ${user.token}`)).status,
      ).toBe(401);
      expect((await post('login/', { emailOrUsername: user.email, password: user.password })).body).toEqual(
        accountFail('Invalid login credentials'),
      );
      expect(typeof (await login(t, { ...user, password: newPassword }))).toBe('string');
      expect(
        (await post('new-password/', { password: 'An0ther!Pass', emailOrUsername: user.email, otp })).body,
      ).toEqual(accountFail('Invalid OTP'));
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        accountFail('Invalid OTP'),
      );
    });

    it('kills the code under attack after 5 failed checks on either endpoint', async () => {
      const user = await signUp(t, smtp, 'lockout');
      await post('generate/otp/', { emailOrUsername: user.email });
      const otp = await mailedOtp(user.email);
      const bad = wrong(otp);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect((await post('verify/otp/', { emailOrUsername: user.email, otp: bad })).body).toEqual(
          accountFail('Invalid OTP'),
        );
      }
      for (let attempt = 0; attempt < 2; attempt += 1) {
        expect(
          (await post('new-password/', { password: 'N3w!Password', emailOrUsername: user.email, otp: bad }))
            .body,
        ).toEqual(accountFail('Invalid OTP'));
      }
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        accountFail('Invalid OTP'),
      );
      await post('generate/otp/', { emailOrUsername: user.email });
      const fresh = await mailedOtp(user.email);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp: fresh })).body).toEqual(
        ok('OTP Verified'),
      );
    });

    it('delays an OTP mail SMTP refuses; the OTP it brings later still works', async () => {
      const user = await signUp(t, smtp, 'otpfail');
      smtp.rejectAll = true;
      expect((await post('generate/otp/', { emailOrUsername: user.email })).body).toEqual(
        ok('Otp Send Successful'),
      );
      await t.deliverMail();
      smtp.rejectAll = false;
      t.clock.advance(10_000);
      const otp = await mailedOtp(user.email);
      expect((await post('verify/otp/', { emailOrUsername: user.email, otp })).body).toEqual(
        ok('OTP Verified'),
      );
    });
  });

  it('keeps errors inside: an unexpected failure is a 500 with an error id and no SQL', async () => {
    const user = newUser('boom');
    await register(t, user);
    await t.dataSource.query('ALTER TABLE outbox_jobs RENAME TO outbox_jobs_away');
    appLog.take();
    try {
      const response = await post('generate/confirm_email/', { email: user.email });
      expect(response.status).toBe(500);
      expect(response.body).toEqual({
        status: 'fail',
        message: 'Internal server error',
        error_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        data: { status: 'fail', message: 'Internal server error' },
      });
      expect(JSON.stringify(response.body)).not.toMatch(/outbox_jobs|SELECT|INSERT|at /);
      // The cause is in the log, under the id the client got (the test's log: not printed).
      const id = (response.body as { error_id: string }).error_id;
      expect(appLog.take(['error']).find((entry) => entry.message.includes(`error_id=${id}`))).toEqual({
        level: 'error',
        context: 'Exceptions',
        message: expect.stringContaining('outbox_jobs'),
      });
    } finally {
      await t.dataSource.query('ALTER TABLE outbox_jobs_away RENAME TO outbox_jobs');
    }
  });

  it('answers an unknown route with a fail envelope', async () => {
    const response = await t.http().get('/api/v1/no-such-thing');
    expect(response.status).toBe(404);
    expect(response.body.status).toBe('fail');
  });
});
