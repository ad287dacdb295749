import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Redis from 'ioredis';
import { MAX_OTP_FAILURES, OTP_LIFETIME_MS } from '../src/account/otp.service';
import {
  ACCOUNT_FAILURE_LIMIT,
  OTP_IDENTIFIER_REQUEST_LIMIT,
  OTP_PAIR_REQUEST_LIMIT,
  PAIR_FAILURE_LIMIT,
} from '../src/rate-limit/account-rate-limit';
import { MAILBOX_LIMIT } from '../src/rate-limit/rate-limiter';
import { post, PostAnswer, startApiProcess } from './helpers/api-process';
import type { ApiProcess } from './helpers/api-process';
import { newUser, signUp, TestUser } from './helpers/accounts';
import { emptyDatabase, testDatabaseUrl } from './helpers/database';
import { accountFail, okMessage as ok } from './helpers/envelopes';
import { describeWithTestRedis, testRedisUrl } from './helpers/prerequisites';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

/**
 * Issue 21: strangers can neither spend an owner's password reset nor lock the owner out of
 * login below the ASVS bound, and no limit tells whether two identifiers name one account.
 * Every request comes over HTTP from a loopback address of its own (127.0.0.<n>).
 */

const tooMany = accountFail('Too many requests');
const invalid = accountFail('Invalid login credentials');
const otpSent = ok('Otp Send Successful');
const OTP_SUBJECT = 'OTP for Password Change';
const LOCK_SUBJECT = 'Your account is locked';
const WRONG = 'Wr0ng!pass';

const address = (n: number) => `127.0.${Math.floor(n / 250)}.${(n % 250) + 2}`;

async function listen(t: TestApp): Promise<number> {
  const server = t.app.getHttpServer() as Server;
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function expectTooMany(answer: PostAnswer): void {
  expect([answer.status, answer.body]).toEqual([429, tooMany]);
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
}

/** The properties, on an app whose limits are in the process (memory) or in Redis. */
function lockoutProperties(env: () => Record<string, string>, options: { clock: boolean }) {
  // Redis keeps its own clock: the windows are moved on the test clock with the memory store
  // only (not declared, rather than skipped, on Redis).
  const onTestClock = options.clock ? describe : (_name: string, _tests: () => void) => undefined;
  const smtp = new SmtpSink();
  let t: TestApp;
  let port: number;
  /** Each test takes addresses of its own: counters outlive a test. */
  let nextAddress = 0;
  const addresses = (count: number) => Array.from({ length: count }, () => address((nextAddress += 1)));

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: env() });
    port = await listen(t);
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  const call = (path: string, body: Record<string, string>, from: string) =>
    post(port, `/api/v1/${path}`, body, { localAddress: from });
  const login = (emailOrUsername: string, password: string, from: string) =>
    call('login/', { emailOrUsername, password }, from);
  const askOtp = (emailOrUsername: string, from: string) => call('generate/otp/', { emailOrUsername }, from);

  /** Mails to the address with the subject, once the outbox has sent what is due. */
  const mailsTo = async (email: string, subject: string) => {
    await t.deliverMail();
    return smtp.received.filter((mail) => mail.to.includes(email) && mail.subject === subject);
  };
  const codesMailed = async (user: TestUser) =>
    (await mailsTo(user.email, OTP_SUBJECT)).map((mail) => /\b(\d{6})\b/.exec(mail.text)![1]);
  const userRow = async (user: TestUser) => {
    const [row] = (await t.dataSource.query(
      'SELECT otp_secret_key AS secret, locked_at AS lockedAt FROM users WHERE email = ?',
      [user.email],
    )) as Array<{ secret: string; lockedAt: unknown }>;
    return { secret: row.secret, locked: row.lockedAt !== null };
  };
  const resetPassword = async (user: TestUser, otp: string, password: string, from: string) =>
    (await call('new-password/', { emailOrUsername: user.email, otp, password }, from)).body;

  describe('password reset (generate/otp)', () => {
    it(`refuses a stranger past ${OTP_PAIR_REQUEST_LIMIT.limit} requests from one address; the owner elsewhere still gets the pending code, which still works`, async () => {
      const user = await signUp(t, smtp, 'otpvictim');
      const before = (await codesMailed(user)).length;
      const [stranger, owner] = addresses(2);
      for (let i = 0; i < OTP_PAIR_REQUEST_LIMIT.limit; i += 1) {
        const answer = await askOtp(i % 2 ? user.username : user.username.toUpperCase(), stranger);
        expect([answer.status, answer.body]).toEqual([200, otpSent]);
      }
      expectTooMany(await askOtp(user.username, stranger));
      // Every one of the stranger's requests mailed one code to the owner: the first made it,
      // the others mailed it again instead of replacing it.
      const strangerCodes = (await codesMailed(user)).slice(before);
      expect(strangerCodes).toHaveLength(OTP_PAIR_REQUEST_LIMIT.limit);
      expect(new Set(strangerCodes).size).toBe(1);
      // The owner, from another address, is answered and mailed the same code, still alive.
      t.clock.advance(OTP_LIFETIME_MS - 30_000);
      expect((await askOtp(user.email, owner)).body).toEqual(otpSent);
      const ownerCodes = (await codesMailed(user)).slice(before);
      expect(ownerCodes[ownerCodes.length - 1]).toBe(strangerCodes[0]);
      const remailed = (await mailsTo(user.email, OTP_SUBJECT)).at(-1)!;
      expect(remailed.text).toMatch(/expires 5 minutes after it was first sent, at \d\d:\d\d:\d\d UTC/);
      expect(await resetPassword(user, strangerCodes[0], 'N3w!Passw0rd', owner)).toEqual(
        ok('Password Change Successful'),
      );
      expect((await login(user.email, 'N3w!Passw0rd', owner)).body).toEqual(
        expect.objectContaining({ status: 'success' }),
      );
    });

    it(`keeps one pending code when 25 requests from 5 addresses come at once, and mails it ${MAILBOX_LIMIT.limit} times (the mailbox's bound)`, async () => {
      const user = await signUp(t, smtp, 'otpburst');
      const before = (await codesMailed(user)).length;
      const { secret } = await userRow(user);
      const from = addresses(5);
      const answers = await Promise.all(
        Array.from({ length: 25 }, (_, i) => askOtp(i % 2 ? user.email : user.username, from[i % 5])),
      );
      expect(answers.map((answer) => [answer.status, answer.body])).toEqual(Array(25).fill([200, otpSent]));
      // The inbox's quarter hour counts the codes mailed at sign-up too.
      const codes = (await codesMailed(user)).slice(before);
      expect(codes).toHaveLength(MAILBOX_LIMIT.limit - before);
      expect(new Set(codes).size).toBe(1);
      expect((await userRow(user)).secret).not.toBe(secret);
      expect(await resetPassword(user, codes[0], 'N3w!Passw0rd', from[0])).toEqual(
        ok('Password Change Successful'),
      );
    });

    it(`limits one identifier to ${OTP_IDENTIFIER_REQUEST_LIMIT.limit} requests an hour from every address together, and never links it to another identifier`, async () => {
      const user = await signUp(t, smtp, 'otpceiling');
      const strangers = addresses(OTP_IDENTIFIER_REQUEST_LIMIT.limit / OTP_PAIR_REQUEST_LIMIT.limit + 1);
      const answers = await Promise.all(
        strangers
          .slice(0, -1)
          .flatMap((from) =>
            Array.from({ length: OTP_PAIR_REQUEST_LIMIT.limit }, () => askOtp(user.username, from)),
          ),
      );
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      expectTooMany(await askOtp(user.username, strangers.at(-1)!));
      // The email of the same account is its own identifier: the owner asks by email.
      expect((await askOtp(user.email, strangers.at(-1)!)).body).toEqual(otpSent);
    });

    it('answers the same whether or not a username and an email name one account', async () => {
      const owner = await signUp(t, smtp, 'otplinka');
      const other = await signUp(t, smtp, 'otplinkb');
      const [from] = addresses(1);
      for (let i = 0; i < OTP_PAIR_REQUEST_LIMIT.limit; i += 1) {
        expect((await askOtp(owner.username, from)).body).toEqual(otpSent);
      }
      expectTooMany(await askOtp(owner.username, from));
      const same = await askOtp(owner.email, from);
      const unrelated = await askOtp(other.email, from);
      expect([same.status, same.body]).toEqual([200, otpSent]);
      expect([unrelated.status, unrelated.body]).toEqual([200, otpSent]);
    });
  });

  describe('login', () => {
    it(`lets the owner's password in from a fresh address below ${ACCOUNT_FAILURE_LIMIT.limit} failures elsewhere, and locks the account at the attempt past them`, async () => {
      const user = await signUp(t, smtp, 'asvs');
      const strangers = addresses(ACCOUNT_FAILURE_LIMIT.limit / PAIR_FAILURE_LIMIT.limit);
      for (const [n, from] of strangers.entries()) {
        // 99 failures in all before the last check of the owner.
        const count = n === strangers.length - 1 ? PAIR_FAILURE_LIMIT.limit - 1 : PAIR_FAILURE_LIMIT.limit;
        const answers = await Promise.all(
          Array.from({ length: count }, (_, i) =>
            login(i % 2 || n % 2 ? user.username : user.email, WRONG, from),
          ),
        );
        expect(answers.map((answer) => answer.body)).toEqual(Array(count).fill(invalid));
        // Below the bound the owner, elsewhere, is never refused.
        const [owner] = addresses(1);
        expect((await login(user.email, user.password, owner)).body).toEqual(
          expect.objectContaining({ status: 'success' }),
        );
      }
      // The hundredth failure is still within the bound.
      expect((await login(user.username, WRONG, addresses(1)[0])).body).toEqual(invalid);
      expect((await mailsTo(user.email, LOCK_SUBJECT)).length).toBe(0);
      expect((await userRow(user)).locked).toBe(false);
      // The next attempt is past it: the account locks, and the answer does not change.
      const [late, owner] = addresses(2);
      expect((await login(user.username, WRONG, late)).body).toEqual(invalid);
      expect((await userRow(user)).locked).toBe(true);
      expect((await login(user.email, user.password, owner)).body).toEqual(invalid);
      expect(await mailsTo(user.email, LOCK_SUBJECT)).toHaveLength(1);
    });

    it(`locks once and mails once when ${ACCOUNT_FAILURE_LIMIT.limit + 30} failures come at once; the OTP mail unlocks`, async () => {
      const user = await signUp(t, smtp, 'lockrace');
      const strangers = addresses(13);
      const answers = await Promise.all(
        strangers.flatMap((from) =>
          Array.from({ length: PAIR_FAILURE_LIMIT.limit }, (_, i) =>
            login(i % 2 ? user.username : user.email, WRONG, from),
          ),
        ),
      );
      // Nobody is told anything new: every answer is the wrong-password one.
      expect(answers.map((answer) => [answer.status, answer.body])).toEqual(
        Array(strangers.length * PAIR_FAILURE_LIMIT.limit).fill([200, invalid]),
      );
      const [owner] = addresses(1);
      expect((await login(user.username, user.password, owner)).body).toEqual(invalid);
      const lockMails = await mailsTo(user.email, LOCK_SUBJECT);
      expect(lockMails).toHaveLength(1);
      // The mail carries nothing of the strangers': no name, no address, no password.
      for (const text of [lockMails[0].text, lockMails[0].html]) {
        expect(text).not.toContain(user.username);
        expect(text).not.toContain(WRONG);
        for (const from of strangers) expect(text).not.toContain(from);
        expect(text).toContain('/password-reset');
      }
      // More failures while locked send no more mail.
      await login(user.email, WRONG, addresses(1)[0]);
      expect(await mailsTo(user.email, LOCK_SUBJECT)).toHaveLength(1);

      // The owner unlocks through the OTP mail.
      expect((await askOtp(user.email, owner)).body).toEqual(otpSent);
      const code = (await codesMailed(user)).at(-1)!;
      expect(await resetPassword(user, code, 'Unl0ck!Passw0rd', owner)).toEqual(
        ok('Password Change Successful'),
      );
      expect((await userRow(user)).locked).toBe(false);
      expect((await login(user.username, 'Unl0ck!Passw0rd', owner)).body).toEqual(
        expect.objectContaining({ status: 'success' }),
      );
      // The failure count went with the lock: one more failure does not lock it again.
      expect((await login(user.email, WRONG, addresses(1)[0])).body).toEqual(invalid);
      expect((await login(user.email, 'Unl0ck!Passw0rd', owner)).body).toEqual(
        expect.objectContaining({ status: 'success' }),
      );
      expect(await mailsTo(user.email, LOCK_SUBJECT)).toHaveLength(1);
    });

    it('keeps the per-address limit per identifier: the answer does not tell whether a username and an email name one account', async () => {
      const owner = await signUp(t, smtp, 'linka');
      const other = await signUp(t, smtp, 'linkb');
      const [from] = addresses(1);
      for (let i = 0; i < PAIR_FAILURE_LIMIT.limit; i += 1) {
        // Every spelling of the name is one identifier.
        const spelling = i % 2 ? owner.username : owner.username.toUpperCase();
        expect((await login(spelling, WRONG, from)).body).toEqual(invalid);
      }
      expectTooMany(await login(owner.username, WRONG, from));
      const same = await login(owner.email, WRONG, from);
      const unrelated = await login(other.email, WRONG, from);
      expect([same.status, same.body]).toEqual([200, invalid]);
      expect([unrelated.status, unrelated.body]).toEqual([200, invalid]);
      // OTP guesses share the identifier's count, and are likewise blind to the account.
      expectTooMany(await call('verify/otp/', { emailOrUsername: owner.username, otp: '123456' }, from));
      const otpSame = await call('verify/otp/', { emailOrUsername: owner.email, otp: '123456' }, from);
      const otpUnrelated = await call('verify/otp/', { emailOrUsername: other.email, otp: '123456' }, from);
      expect([otpSame.status, otpSame.body]).toEqual([200, accountFail('Invalid OTP')]);
      expect([otpUnrelated.status, otpUnrelated.body]).toEqual([200, accountFail('Invalid OTP')]);
      // And the owner's own correct password from there is still let in by email.
      expect((await login(owner.email, owner.password, from)).body).toEqual(
        expect.objectContaining({ status: 'success' }),
      );
    });
  });

  // Redis keeps its own time, which the test clock does not move: windows are tested in memory.
  onTestClock('windows on the test clock', () => {
    it(`makes a new code only when none is pending (expired, used, or ${MAX_OTP_FAILURES} failures); a stranger who lets codes expire spends none of the owner's budget`, async () => {
      const user = await signUp(t, smtp, 'otpnew');
      const [from, owner] = addresses(2);
      expect((await askOtp(user.email, from)).body).toEqual(otpSent);
      const first = await userRow(user);
      // Expired: a new code.
      t.clock.advance(OTP_LIFETIME_MS);
      expect((await askOtp(user.email, from)).body).toEqual(otpSent);
      const second = await userRow(user);
      expect(second.secret).not.toBe(first.secret);
      // Its failed checks used up: a new code.
      const code = (await codesMailed(user)).at(-1)!;
      const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
      for (let i = 0; i < MAX_OTP_FAILURES; i += 1) {
        expect(
          (await call('verify/otp/', { emailOrUsername: user.username, otp: wrong }, from)).body,
        ).toEqual(accountFail('Invalid OTP'));
      }
      expect((await askOtp(user.email, from)).body).toEqual(otpSent);
      const third = await userRow(user);
      expect(third.secret).not.toBe(second.secret);
      // A stranger asks again each time the code dies, for 80 minutes: every code is new, and
      // none costs the owner anything (only failed checks count against the account).
      let secret = third.secret;
      for (let i = 0; i < 16; i += 1) {
        t.clock.advance(OTP_LIFETIME_MS);
        expect((await askOtp(i % 2 ? user.email : user.username, from)).body).toEqual(otpSent);
        const next = await userRow(user);
        expect(next.secret).not.toBe(secret);
        secret = next.secret;
      }
      t.clock.advance(OTP_LIFETIME_MS);
      expect((await askOtp(user.email, owner)).body).toEqual(otpSent);
      const ownerCode = (await codesMailed(user)).at(-1)!;
      expect(await resetPassword(user, ownerCode, 'N3w!Passw0rd', owner)).toEqual(
        ok('Password Change Successful'),
      );
    });

    it(`counts ${ACCOUNT_FAILURE_LIMIT.limit} failures in any hour: those an hour old no longer count towards the lock`, async () => {
      const user = await signUp(t, smtp, 'sliding');
      const fail = async (count: number) => {
        const from = addresses(Math.ceil(count / PAIR_FAILURE_LIMIT.limit));
        const answers = await Promise.all(
          Array.from({ length: count }, (_, i) =>
            login(user.email, WRONG, from[Math.floor(i / PAIR_FAILURE_LIMIT.limit)]),
          ),
        );
        expect(answers.map((answer) => answer.body)).toEqual(Array(count).fill(invalid));
      };
      await fail(60);
      t.clock.advance(59 * 60_000);
      await fail(40);
      t.clock.advance(61_000);
      // The first 60 are more than an hour old: 41 in the hour, no lock.
      await fail(1);
      expect((await userRow(user)).locked).toBe(false);
      expect((await login(user.email, user.password, addresses(1)[0])).body).toEqual(
        expect.objectContaining({ status: 'success' }),
      );
    });
  });
}

describe('strangers cannot spend a reset or lock an owner out (limits in the process)', () => {
  lockoutProperties(() => ({ RATE_LIMIT: 'on' }), { clock: true });
});

describeWithTestRedis('strangers cannot spend a reset or lock an owner out (limits in Redis)', () => {
  const redisUrl = testRedisUrl();
  const redis = new Redis(redisUrl, { lazyConnect: true });
  beforeAll(async () => {
    await redis.connect();
    await redis.flushdb();
  });
  afterAll(async () => {
    await redis.flushdb();
    await redis.quit();
  });
  lockoutProperties(() => ({ RATE_LIMIT: 'on', REDIS_URL: redisUrl }), { clock: false });
});

/** Two API processes on one database and one Redis: one lock, one mail, one pending code across them. */
describeWithTestRedis('across two replicas sharing Redis', () => {
  const redisUrl = testRedisUrl();
  const redis = new Redis(redisUrl, { lazyConnect: true });
  const smtp = new SmtpSink();
  let replicas: ApiProcess[] = [];

  beforeAll(async () => {
    await redis.connect();
    await redis.flushdb();
    await smtp.start();
    const databaseUrl = testDatabaseUrl();
    await emptyDatabase(databaseUrl);
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      RATE_LIMIT: 'on',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_SECURE: 'false',
      SMTP_FROM: 'SVC <svc@test.local>',
    };
    // One after the other: the first migrates, the second finds the schema in place.
    replicas.push(await startApiProcess(env));
    replicas.push(await startApiProcess(env));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    replicas = [];
    await smtp.stop();
    await redis.flushdb();
    await redis.quit();
  });

  const call = (i: number, path: string, body: Record<string, string>, from: string) =>
    post(replicas[i % 2].port, `/api/v1/${path}`, body, { localAddress: from });
  const mailsTo = (email: string, subject: string) =>
    smtp.received.filter((mail) => mail.to.includes(email) && mail.subject === subject);
  /** Registered, not confirmed: a right password answers `Your account is not active` unless locked. */
  const registered = async (prefix: string) => {
    const user = newUser(prefix);
    const answer = await call(
      0,
      'register/',
      {
        username: user.username,
        email: user.email,
        password: user.password,
        confirm_password: user.password,
      },
      address(600),
    );
    expect(answer.body).toEqual(ok('User created successfully'));
    return user;
  };

  it(`locks once and mails once when ${ACCOUNT_FAILURE_LIMIT.limit + 30} failures come at once to both`, async () => {
    const user = await registered('replock');
    const from = Array.from({ length: 13 }, (_, n) => address(500 + n));
    const answers = await Promise.all(
      Array.from({ length: 130 }, (_, i) =>
        call(
          i,
          'login/',
          { emailOrUsername: i % 3 ? user.email : user.username, password: WRONG },
          from[i % 13],
        ),
      ),
    );
    expect(answers.map((answer) => [answer.status, answer.body])).toEqual(Array(130).fill([200, invalid]));
    // Locked: the right password gets the wrong-password answer, not `Your account is not active`.
    expect(
      (await call(1, 'login/', { emailOrUsername: user.email, password: user.password }, address(520))).body,
    ).toEqual(invalid);
    await smtp.until(
      () => mailsTo(user.email, LOCK_SUBJECT).length > 0,
      () => 'no lock mail',
    );
    // A later mail to the same address arrives after any second lock mail would have.
    expect((await call(0, 'generate/confirm_email/', { email: user.email }, address(521))).status).toBe(200);
    await smtp.until(
      () => mailsTo(user.email, 'Account Activation').length > 0,
      () => 'no activation mail',
    );
    expect(mailsTo(user.email, LOCK_SUBJECT)).toHaveLength(1);
  });

  it(`keeps one pending code when 20 OTP requests come at once to both, mailed ${MAILBOX_LIMIT.limit} times in all`, async () => {
    const user = await registered('repotp');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(
          i,
          'generate/otp/',
          { emailOrUsername: i % 2 ? user.email : user.username },
          address(530 + (i % 4)),
        ),
      ),
    );
    expect(answers.map((answer) => [answer.status, answer.body])).toEqual(Array(20).fill([200, otpSent]));
    await smtp.until(
      () => mailsTo(user.email, OTP_SUBJECT).length === MAILBOX_LIMIT.limit,
      () => `${mailsTo(user.email, OTP_SUBJECT).length} of ${MAILBOX_LIMIT.limit} OTP mails`,
    );
    // A later mail to the same address arrives after any eleventh OTP mail would have.
    expect((await call(0, 'generate/confirm_email/', { email: user.email }, address(541))).status).toBe(200);
    await smtp.until(
      () => mailsTo(user.email, 'Account Activation').length > 0,
      () => 'no activation mail',
    );
    expect(mailsTo(user.email, OTP_SUBJECT)).toHaveLength(MAILBOX_LIMIT.limit);
    const codes = mailsTo(user.email, OTP_SUBJECT).map((mail) => /\b(\d{6})\b/.exec(mail.text)![1]);
    expect(new Set(codes).size).toBe(1);
    expect(
      (await call(1, 'verify/otp/', { emailOrUsername: user.email, otp: codes[0] }, address(540))).body,
    ).toEqual(ok('OTP Verified'));
  });
});
