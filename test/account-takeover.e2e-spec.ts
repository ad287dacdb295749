import {
  activationKey,
  login,
  mailedOtp,
  newUser,
  register,
  setPasswordByOtp,
  signUp,
} from './helpers/accounts';
import { accountFail, okMessage as ok } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

/**
 * Takeover before the owner arrives: the owner of the address chooses, through the activation
 * mail, between confirming (the password chosen at registration is kept: the contract's flow)
 * and claiming (that password is cleared and the owner sets one by OTP); an active account
 * gets no link and its links change nothing, and the mails carry no text of whoever
 * registered. On SQLite and on MariaDB (TEST_DATABASE_URL).
 */
describe('no account taken over before its owner arrives', () => {
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
  afterEach(() => t.clock.reset());

  const post = (path: string, body: Record<string, string>) => t.http().post(`/api/v1/${path}`).send(body);
  const loginBody = async (identifier: string, password: string) =>
    (await post('login/', { emailOrUsername: identifier, password })).body as unknown;
  const mailsTo = (email: string) => smtp.received.filter((mail) => mail.to.includes(email));
  const requestLink = async (email: string) =>
    expect((await post('generate/confirm_email/', { email })).body).toEqual(ok('Email send successful'));

  const keyFor = async (user: { email: string }) => {
    await requestLink(user.email);
    return activationKey(t, smtp, user.email);
  };

  it('keeps the password chosen at registration: register, generate, verify and login give a token', async () => {
    const user = newUser('keeper');
    await register(t, user);
    const key = await keyFor(user);
    smtp.clear();
    expect((await t.http().get(`/api/v1/verify/confirm_email/${key}`)).body).toEqual(ok('Email Verified'));
    expect(typeof (await login(t, user))).toBe('string');
    await t.deliverMail();
    expect(mailsTo(user.email)).toHaveLength(0);
  });

  it('keeps it through the page of the link too, which says so', async () => {
    const user = newUser('pagekeeper');
    await register(t, user);
    const page = await t
      .http()
      .post(`/email-verify/${await keyFor(user)}`)
      .type('form')
      .send('')
      .expect(200);
    expect(page.text).toContain('your email address is confirmed and your account is active');
    expect(page.text).not.toContain('no password yet');
    expect(typeof (await login(t, user))).toBe('string');
  });

  it("the claim page keeps a stranger's password out: the account is the owner's, who sets one by OTP", async () => {
    const victim = newUser('victim');
    const stranger = { ...victim, username: 'stranger1', password: 'Str4nger!Chosen' };
    await register(t, stranger);
    const key = await keyFor(victim);

    // Opening the link changes nothing (mail scanners open links); the button does.
    const opened = await t.http().get(`/email-claim/${key}`).expect(200);
    expect(opened.text).toContain('I did not register: secure this address');
    const page = await t.http().post(`/email-claim/${key}`).type('form').send('').expect(200);
    expect(page.text).toContain('Your account has no password yet');
    expect(page.text).toContain('href="/password-reset"');
    await t.deliverMail();
    const told = smtp.lastTo(victim.email)!;
    expect(told.subject).toBe('Set your password');
    expect(told.html).toContain('http://svc.example.test:8443/password-reset');

    expect(await loginBody(victim.email, stranger.password)).toEqual(
      accountFail('Invalid login credentials'),
    );
    expect(await loginBody(stranger.username, stranger.password)).toEqual(
      accountFail('Invalid login credentials'),
    );
    await setPasswordByOtp(t, smtp, victim);
    expect(await loginBody(victim.email, stranger.password)).toEqual(
      accountFail('Invalid login credentials'),
    );
    expect(typeof (await login(t, { ...victim, username: stranger.username }))).toBe('string');
  });

  describe('POST verify/claim_email/<key>', () => {
    const claim = (key: string) => t.http().post(`/api/v1/verify/claim_email/${key}`).expect(200);

    it('answers Email Verified, clears the password and mails how to set one; the key is used once', async () => {
      const user = newUser('apiclaim');
      await register(t, user);
      const key = await keyFor(user);
      expect((await claim(key)).body).toEqual(ok('Email Verified'));
      expect(await loginBody(user.email, user.password)).toEqual(accountFail('Invalid login credentials'));
      await t.deliverMail();
      expect(smtp.lastTo(user.email)?.subject).toBe('Set your password');
      expect((await claim(key)).body).toEqual(ok('Invalid Link'));
      expect((await t.http().get(`/api/v1/verify/confirm_email/${key}`)).body).toEqual(ok('Invalid Link'));
    });

    it('answers Invalid Link for an unknown key and for the key of a confirmed account', async () => {
      expect((await claim('00000000-0000-4000-8000-000000000000')).body).toEqual(ok('Invalid Link'));
      expect((await claim('z'.repeat(500))).body).toEqual(ok('Invalid Link'));
      const user = newUser('claimlate');
      await register(t, user);
      const key = await keyFor(user);
      expect((await t.http().get(`/api/v1/verify/confirm_email/${key}`)).body).toEqual(ok('Email Verified'));
      expect((await claim(key)).body).toEqual(ok('Invalid Link'));
      expect(typeof (await login(t, user))).toBe('string');
    });

    it('answers Link Expired with the email after the hour, and activates nothing', async () => {
      const user = newUser('claimexpired');
      await register(t, user);
      const key = await keyFor(user);
      t.clock.advance(60 * 60 * 1000 + 5_000);
      expect((await claim(key)).body).toEqual(ok('Link Expired', { email: user.email }));
      t.clock.reset();
      expect(await loginBody(user.email, user.password)).toEqual(accountFail('Your account is not active'));
    });
  });

  it('activates once when one key is pressed 12 times at once (confirm and claim, page and API)', async () => {
    const user = newUser('raceconfirm');
    await register(t, user);
    const key = await keyFor(user);
    smtp.clear();
    const presses = [
      () => t.http().get(`/api/v1/verify/confirm_email/${key}`),
      () => t.http().post(`/email-verify/${key}`),
      () => t.http().post(`/api/v1/verify/claim_email/${key}`),
      () => t.http().post(`/email-claim/${key}`),
    ];
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => presses[i % 4]()));
    const verified = answers.filter(
      (answer) =>
        answer.status === 200 &&
        (answer.text.includes('Email Verified') || answer.text.includes('Email address confirmed')),
    );
    expect(verified).toHaveLength(1);
    const claimed = [2, 3].includes(answers.indexOf(verified[0]) % 4);
    await t.deliverMail();
    // The one that won decides: a claim clears the password (one mail), a confirmation keeps it.
    expect(mailsTo(user.email).map((mail) => mail.subject)).toEqual(claimed ? ['Set your password'] : []);
    const logInAnswer = (await loginBody(user.email, user.password)) as { status: string; message: unknown };
    expect(logInAnswer.status === 'success').toBe(!claimed);
  });

  it('a claim keeps a password set through the mailed OTP before it', async () => {
    const user = newUser('otpfirst');
    await register(t, user);
    await setPasswordByOtp(t, smtp, user);
    const key = await keyFor(user);
    smtp.clear();
    const page = await t.http().post(`/email-claim/${key}`).expect(200);
    expect(page.text).not.toContain('no password yet');
    await t.deliverMail();
    expect(mailsTo(user.email)).toHaveLength(0);
    expect(typeof (await login(t, user))).toBe('string');
  });

  describe('an active account', () => {
    it('gets no activation mail, with the same answer, also for 10 requests at once; the links written change nothing', async () => {
      const user = await signUp(t, smtp, 'active');
      smtp.clear();
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          post('generate/confirm_email/', { email: user.email.toUpperCase() }),
        ),
      );
      expect(answers.map((answer) => answer.body)).toEqual(Array(10).fill(ok('Email send successful')));
      await t.deliverMail();
      expect(mailsTo(user.email)).toHaveLength(0);
      // A link record is written for every address alike (so the work does not tell whether it
      // has an account, or an active one); this one was mailed to nobody, and it is refused.
      const keys = (await t.dataSource.query(
        'SELECT key_value FROM email_confirmation WHERE email_key = ? ORDER BY id',
        [user.email.toLowerCase()],
      )) as Array<{ key_value: string }>;
      expect(keys).toHaveLength(10);
      const token = await login(t, user);
      expect((await t.http().get(`/api/v1/verify/confirm_email/${keys[9].key_value}`)).body).toEqual(
        ok('Invalid Link'),
      );
      await t.http().get('/api/v1/community-plugins/me/').set('Authorization', `Bearer ${token}`).expect(200);
      expect(typeof (await login(t, user))).toBe('string');
      await t.deliverMail();
      expect(mailsTo(user.email)).toHaveLength(0);
    });

    it('is not changed by a link of its own: password and tokens stay, the answer is Invalid Link', async () => {
      const user = newUser('oldlink');
      await register(t, user);
      await requestLink(user.email);
      const key = await activationKey(t, smtp, user.email);
      // The account became active while this link was out (an operator, or a worker that
      // raced the confirmation); its owner set a password and logged in.
      await t.dataSource.query('UPDATE users SET is_active = ? WHERE email = ?', [true, user.email]);
      await setPasswordByOtp(t, smtp, user);
      const token = await login(t, user);
      smtp.clear();
      const answers = await Promise.all([
        t.http().get(`/api/v1/verify/confirm_email/${key}`),
        t.http().post(`/email-verify/${key}`),
      ]);
      expect(answers[0].body).toEqual(ok('Invalid Link'));
      expect(answers[1].status).toBe(404);
      await t.http().get('/api/v1/community-plugins/me/').set('Authorization', `Bearer ${token}`).expect(200);
      expect(typeof (await login(t, user))).toBe('string');
      await t.deliverMail();
      expect(mailsTo(user.email)).toHaveLength(0);
    });
  });

  describe('usernames and mails', () => {
    const registration = (username: string, email: string) => ({
      username,
      email,
      password: 'Str0ng!Passw0rd',
      confirm_password: 'Str0ng!Passw0rd',
    });

    it.each([
      'Visit http://evil.example/reset now',
      'a b',
      'evil/path',
      '<b>x</b>',
      'x'.repeat(65),
      'call:me',
      'name@host',
      '\u202Ereversed',
    ])('refuses %j with Choose a valid username', async (username) => {
      expect((await post('register/', registration(username, 'someone.else@example.com'))).body).toEqual(
        accountFail('Choose a valid username'),
      );
    });

    it.each(['a.b-c_d', 'x'.repeat(64), 'Émile2', 'Zoë.Ω'])('accepts %j', async (username) => {
      const email = `ok.${Buffer.from(username).toString('hex').slice(0, 40)}@example.com`;
      expect((await post('register/', registration(username, email))).body).toEqual(
        ok('User created successfully'),
      );
    });

    it('sends no username in the activation and OTP mails to an unconfirmed address', async () => {
      const user = { ...newUser('quiet'), username: 'Reset.your.password-at.evil.example' };
      await register(t, user);
      smtp.clear();
      await requestLink(user.email);
      expect((await post('generate/otp/', { emailOrUsername: user.email })).body).toEqual(
        ok('Otp Send Successful'),
      );
      await mailedOtp(t, smtp, user.email);
      const mails = mailsTo(user.email);
      expect(mails.map((mail) => mail.subject).sort()).toEqual([
        'Account Activation',
        'OTP for Password Change',
      ]);
      for (const mail of mails) {
        expect(mail.html).not.toContain(user.username);
        expect(mail.text).not.toContain(user.username);
      }
    });

    it('lets a user registered under an older, wider name rule log in by that name', async () => {
      const user = await signUp(t, smtp, 'legacyname');
      await t.dataSource.query('UPDATE users SET name = ?, name_key = ? WHERE email = ?', [
        'Old Name!',
        'old name!',
        user.email,
      ]);
      expect(typeof (await login(t, { ...user, username: 'OLD NAME!' }))).toBe('string');
    });
  });

  describe('login with a password over 72 bytes', () => {
    it('answers Invalid login credentials although its first 72 bytes are the password', async () => {
      // 38 characters (the pattern allows 64), 72 bytes: bcrypt's whole input.
      const password = 'Aa1!' + 'é'.repeat(34);
      expect(Buffer.byteLength(password)).toBe(72);
      const user = { ...newUser('long72'), password };
      await register(t, user);
      await t.http().post('/api/v1/generate/confirm_email/').send({ email: user.email });
      await t.http().get(`/api/v1/verify/confirm_email/${await activationKey(t, smtp, user.email)}`);
      await setPasswordByOtp(t, smtp, user);
      expect(typeof (await login(t, user))).toBe('string');
      for (const longer of [password + 'y', password + 'é', password + 'x'.repeat(1000)]) {
        expect(await loginBody(user.email, longer)).toEqual(accountFail('Invalid login credentials'));
      }
    });
  });
});

/** Every confirmation a claim (ACCOUNT_CONFIRMATION=claim), and admin addresses in either mode. */
describe.each([
  ['ACCOUNT_CONFIRMATION=claim', { ACCOUNT_CONFIRMATION: 'claim' }, 'claimed@example.com'],
  ['an admin address of SVC_ADMIN_EMAILS', { SVC_ADMIN_EMAILS: 'listed@example.com' }, 'listed@example.com'],
])('a confirmation that clears the password: %s', (_name, env, email) => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('answers Email Verified, keeps the registered password out and lets the owner set one by OTP', async () => {
    const user = { ...newUser('cleared'), email };
    const stranger = { ...user, password: 'Str4nger!Chosen' };
    await register(t, stranger);
    await t.http().post('/api/v1/generate/confirm_email/').send({ email }).expect(200);
    const key = await activationKey(t, smtp, email);
    expect((await t.http().get(`/api/v1/verify/confirm_email/${key}`)).body).toEqual(ok('Email Verified'));
    const loginBody = async (password: string) =>
      (await t.http().post('/api/v1/login/').send({ emailOrUsername: email, password })).body as unknown;
    expect(await loginBody(stranger.password)).toEqual(accountFail('Invalid login credentials'));
    await t.deliverMail();
    expect(smtp.lastTo(email)?.subject).toBe('Set your password');
    await setPasswordByOtp(t, smtp, user);
    expect(typeof (await login(t, user))).toBe('string');
  });
});
