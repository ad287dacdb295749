import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Redis from 'ioredis';
import {
  ACCOUNT_FAILURE_LIMIT,
  ACCOUNT_REQUEST_LIMIT,
  ADDRESS_LIMIT,
  PAIR_FAILURE_LIMIT,
} from '../src/rate-limit/account-rate-limit';
import { freePort, post, PostAnswer, startApiProcess } from './helpers/api-process';
import type { ApiProcess } from './helpers/api-process';
import { setPasswordByOtp, signUp, STRONG_PASSWORD } from './helpers/accounts';
import { emptyDatabase, testDatabaseUrl } from './helpers/database';
import { describeWithTestRedis, testRedisUrl } from './helpers/prerequisites';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';
import { accountFail, okMessage } from './helpers/envelopes';

const tooMany = accountFail('Too many requests');
const invalid = accountFail('Invalid login credentials');

/** Loopback addresses other than 127.0.0.1: each is another client to the server. */
const address = (n: number) => `127.0.0.${n + 2}`;

async function listen(t: TestApp): Promise<number> {
  const server = t.app.getHttpServer() as Server;
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function expectTooMany(answer: PostAnswer): void {
  expect([answer.status, answer.body]).toEqual([429, tooMany]);
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
}

describe('rate limits on the account endpoints', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { RATE_LIMIT: 'on' } });
    port = await listen(t);
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });
  afterEach(() => t.clock.reset());

  const login = (emailOrUsername: string, password: string, from = address(0)) =>
    post(port, '/api/v1/login/', { emailOrUsername, password }, { localAddress: from });

  it('counts the failures naming one identifier from one address under every spelling of it, and refuses the rest with 429 and Retry-After', async () => {
    const user = await signUp(t, smtp, 'spelling');
    const spellings = [
      user.username,
      user.username.toUpperCase(),
      `ＳＰＥＬＬＩＮＧ${user.username.slice(8)}`,
    ];
    const from = address(1);
    for (let i = 0; i < PAIR_FAILURE_LIMIT.limit; i += 1) {
      expect((await login(spellings[i % spellings.length], 'Wr0ng!pass', from)).body).toEqual(invalid);
    }
    expectTooMany(await login(user.username, user.password, from));
    // The email is another identifier: its count does not depend on which account it names.
    expect((await login(user.email.toUpperCase(), user.password, from)).body).toEqual(
      expect.objectContaining({ status: 'success' }),
    );
    // The owner, elsewhere, is not locked out by those failures.
    expect((await login(user.username, user.password, address(2))).body).toEqual(
      expect.objectContaining({ status: 'success' }),
    );
    // The window ends.
    t.clock.advance(PAIR_FAILURE_LIMIT.windowMs);
    expect((await login(user.username, user.password, from)).status).toBe(200);
  });

  it('lets exactly the limit through when the failures are sent at once', async () => {
    const user = await signUp(t, smtp, 'burst');
    const from = address(3);
    const answers = await Promise.all(
      Array.from({ length: PAIR_FAILURE_LIMIT.limit + 6 }, () => login(user.email, 'Wr0ng!pass', from)),
    );
    expect(answers.filter((answer) => answer.status === 200).map((answer) => answer.body)).toEqual(
      Array(PAIR_FAILURE_LIMIT.limit).fill(invalid),
    );
    answers.filter((answer) => answer.status !== 200).forEach(expectTooMany);
  });

  it(`locks the account at the attempt past ${ACCOUNT_FAILURE_LIMIT.limit} failures in the hour, until its owner sets a password by OTP mail`, async () => {
    const user = await signUp(t, smtp, 'asvs');
    const addresses = ACCOUNT_FAILURE_LIMIT.limit / PAIR_FAILURE_LIMIT.limit;
    for (let a = 0; a < addresses; a += 1) {
      const answers = await Promise.all(
        Array.from({ length: PAIR_FAILURE_LIMIT.limit }, () =>
          login(user.username, 'Wr0ng!pass', address(10 + a)),
        ),
      );
      expect(answers.map((answer) => answer.body)).toEqual(Array(PAIR_FAILURE_LIMIT.limit).fill(invalid));
    }
    // Past the bound every password is refused alike, the owner's too, and no 429 tells why.
    expect((await login(user.email, user.password, address(10 + addresses))).body).toEqual(invalid);
    // OTP guesses are bounded per code, not by the lock: the way to unlock stays open.
    expect(
      (
        await post(
          port,
          '/api/v1/verify/otp/',
          { emailOrUsername: user.email, otp: '123456' },
          { localAddress: address(11 + addresses) },
        )
      ).body,
    ).toEqual(accountFail('Invalid OTP'));
    // The lock does not end with the hour.
    t.clock.advance(ACCOUNT_FAILURE_LIMIT.windowMs);
    expect((await login(user.email, user.password, address(10 + addresses))).body).toEqual(invalid);
    await setPasswordByOtp(t, smtp, user);
    expect((await login(user.email, user.password, address(10 + addresses))).body).toEqual(
      expect.objectContaining({ status: 'success' }),
    );
  });

  it(`counts ${ACCOUNT_FAILURE_LIMIT.limit} failures in any hour, not per calendar hour`, async () => {
    const user = await signUp(t, smtp, 'sliding');
    const burst = async (count: number, firstAddress: number) => {
      const answers: PostAnswer[] = [];
      for (let i = 0; i < count; i += 1) {
        answers.push(
          await login(
            user.email,
            'Wr0ng!pass',
            address(firstAddress + Math.floor(i / PAIR_FAILURE_LIMIT.limit)),
          ),
        );
      }
      return answers;
    };
    expect((await burst(60, 100)).every((answer) => answer.status === 200)).toBe(true);
    t.clock.advance(59 * 60_000);
    expect((await burst(40, 110)).every((answer) => answer.status === 200)).toBe(true);
    // 100 in the last hour; a minute later the first 60 are an hour old, and one more
    // failure does not lock the account.
    t.clock.advance(61_000);
    expect((await login(user.email, 'Wr0ng!pass', address(120))).body).toEqual(invalid);
    expect((await login(user.email, user.password, address(121))).body).toEqual(
      expect.objectContaining({ status: 'success' }),
    );
  });

  it('does not count right answers: logins that succeed never use up the budget', async () => {
    const user = await signUp(t, smtp, 'good');
    const from = address(40);
    for (let i = 0; i < PAIR_FAILURE_LIMIT.limit + 5; i += 1) {
      expect((await login(user.email, user.password, from)).status).toBe(200);
    }
  });

  it(`limits requests per client address: ${ADDRESS_LIMIT.limit} a minute per route, also when sent at once`, async () => {
    const from = address(50);
    const answers = await Promise.all(
      Array.from({ length: ADDRESS_LIMIT.limit + 5 }, (_, i) =>
        post(port, '/api/v1/generate/otp/', { emailOrUsername: `someone-${i}` }, { localAddress: from }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(ADDRESS_LIMIT.limit);
    answers.filter((answer) => answer.status !== 200).forEach(expectTooMany);
  });

  /**
   * `limit + 1` requests to `route`, one after another from addresses of their own, each naming
   * `email(i)`: the last is refused.
   */
  async function expectMailboxBound(route: string, email: (i: number) => string, from: number) {
    const answers: PostAnswer[] = [];
    for (let i = 0; i <= ACCOUNT_REQUEST_LIMIT.limit; i += 1) {
      const body =
        route === 'register/'
          ? { email: email(i), username: 'x', password: 'x', confirm_password: 'y' }
          : { email: email(i) };
      answers.push(await post(port, `/api/v1/${route}`, body, { localAddress: address(from + i) }));
    }
    expect(answers.slice(0, -1).map((answer) => answer.status)).toEqual(
      Array<number>(ACCOUNT_REQUEST_LIMIT.limit).fill(200),
    );
    expectTooMany(answers[answers.length - 1]);
  }

  it(`limits mail and registration per mailbox: ${ACCOUNT_REQUEST_LIMIT.limit} requests per route, whichever of its addresses they name`, async () => {
    const spellings = [
      'Same@Example.com',
      'same+1@example.com',
      'SAME+news@EXAMPLE.COM',
      'same+@example.com',
    ];
    const spelling = (i: number) => spellings[i % spellings.length];
    await expectMailboxBound('generate/confirm_email/', spelling, 60);
    await expectMailboxBound('register/', spelling, 60);
    // Another mailbox has its budget of its own.
    const other = await post(
      port,
      '/api/v1/generate/confirm_email/',
      { email: 'same.other@example.com' },
      { localAddress: address(72) },
    );
    expect([other.status, other.body]).toEqual([200, okMessage('Email send successful')]);
  });

  it('at gmail, dots and googlemail reach one mailbox: they share its bound, and a dot elsewhere does not', async () => {
    const spellings = ['v.ictim@gmail.com', 'Victim+news@googlemail.com', 'VIC.TIM@Gmail.com'];
    await expectMailboxBound('generate/confirm_email/', (i) => spellings[i % spellings.length], 130);
    const elsewhere = await post(
      port,
      '/api/v1/generate/confirm_email/',
      { email: 'v.ictim@example.com' },
      { localAddress: address(142) },
    );
    expect([elsewhere.status, elsewhere.body]).toEqual([200, okMessage('Email send successful')]);
  });

  it(`activation mails to one mailbox through +tags sent at once: ${ACCOUNT_REQUEST_LIMIT.limit} answered, the rest refused`, async () => {
    // Two accounts of one mailbox, waiting for activation: each request may mail that inbox.
    for (const [i, email] of ['victim+1@example.com', 'Victim+2@Example.com'].entries()) {
      const registered = await post(
        port,
        '/api/v1/register/',
        { username: `victim${i}`, email, password: STRONG_PASSWORD, confirm_password: STRONG_PASSWORD },
        { localAddress: address(150 + i) },
      );
      expect(registered.body).toEqual(okMessage('User created successfully'));
    }
    const answers = await Promise.all(
      Array.from({ length: ACCOUNT_REQUEST_LIMIT.limit + 2 }, (_, i) =>
        post(
          port,
          '/api/v1/generate/confirm_email/',
          { email: i % 2 === 0 ? 'victim+1@example.com' : `Victim+${i}@Example.com` },
          { localAddress: address(160 + i) },
        ),
      ),
    );
    const answered = answers.filter((answer) => answer.status === 200);
    expect(answered.map((answer) => answer.body)).toEqual(
      Array<unknown>(ACCOUNT_REQUEST_LIMIT.limit).fill(okMessage('Email send successful')),
    );
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(refused).toHaveLength(2);
    refused.forEach(expectTooMany);
  });

  it('fails closed with 503 when the shared store cannot answer', async () => {
    const deadRedis = `redis://127.0.0.1:${await freePort()}/0`;
    const closed = await createTestApp({ env: { RATE_LIMIT: 'on', REDIS_URL: deadRedis } });
    try {
      const answer = await closed.http().post('/api/v1/login/').send({ emailOrUsername: 'x', password: 'y' });
      expect([answer.status, answer.body]).toEqual([503, accountFail('Service unavailable')]);
    } finally {
      await closed.close();
    }
  });
});

describe('RATE_LIMIT=off', () => {
  it('lets every attempt through', async () => {
    const t = await createTestApp({ env: { RATE_LIMIT: 'off' } });
    try {
      for (let i = 0; i <= PAIR_FAILURE_LIMIT.limit + 1; i += 1) {
        await t.http().post('/api/v1/login/').send({ emailOrUsername: 'target', password: 'x' }).expect(200);
      }
    } finally {
      await t.close();
    }
  });
});

/** Two API processes on one database and one Redis: the limits are the replicas' together. */
describeWithTestRedis('limits shared by replicas through Redis', () => {
  const redisUrl = testRedisUrl();
  const redis = new Redis(redisUrl, { lazyConnect: true });
  let replicas: ApiProcess[] = [];

  beforeAll(async () => {
    await redis.connect();
    await redis.flushdb();
    const databaseUrl = testDatabaseUrl();
    await emptyDatabase(databaseUrl);
    const env = { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, RATE_LIMIT: 'on' };
    // One after the other: the first migrates, the second finds the schema in place.
    replicas.push(await startApiProcess(env));
    replicas.push(await startApiProcess(env));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    replicas = [];
    await redis.flushdb();
    await redis.quit();
  });

  it('counts the failures of one account across both replicas', async () => {
    const answers = await Promise.all(
      Array.from({ length: PAIR_FAILURE_LIMIT.limit + 8 }, (_, i) =>
        post(replicas[i % 2].port, '/api/v1/login/', { emailOrUsername: 'Ghost', password: 'Wr0ng!pass' }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200).map((answer) => answer.body)).toEqual(
      Array(PAIR_FAILURE_LIMIT.limit).fill(invalid),
    );
    answers.filter((answer) => answer.status !== 200).forEach(expectTooMany);
  });

  it('counts the requests of one address across both replicas', async () => {
    const answers = await Promise.all(
      Array.from({ length: ADDRESS_LIMIT.limit + 6 }, (_, i) =>
        post(replicas[i % 2].port, '/api/v1/generate/otp/', { emailOrUsername: `nobody-${i}` }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(ADDRESS_LIMIT.limit);
    answers.filter((answer) => answer.status !== 200).forEach(expectTooMany);
  });
});
