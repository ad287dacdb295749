import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ADDRESS_LIMIT } from '../src/rate-limit/account-rate-limit';
import { MAILBOX_LIMIT } from '../src/rate-limit/rate-limiter';
import { post, type PostAnswer } from './helpers/api-process';
import { STRONG_PASSWORD } from './helpers/accounts';
import { accountFail, okMessage } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { appLog, createTestApp, type TestApp } from './helpers/test-app';

/**
 * Issue 45, the fifth round's findings: OTP mails counted by mailbox, IPv6 clients counted by
 * network, the RateLimit fields before a 429, and registration bursts answered without a 500.
 * Every request comes over HTTP; the test is the balancer (127.0.0.1, trusted) where it says who
 * its clients are in X-Forwarded-For, or a client of its own loopback address.
 */

const tooMany = accountFail('Too many requests');
const otpSent = okMessage('Otp Send Successful');

async function listen(t: TestApp): Promise<number> {
  const server = t.app.getHttpServer() as Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A loopback address of its own for each n: a fresh client to the server. */
const loopback = (n: number) => `127.0.${Math.floor(n / 250) + 1}.${(n % 250) + 2}`;

describe('OTP mails to one mailbox', () => {
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

  it(`mails at most ${MAILBOX_LIMIT.limit} a quarter hour to one inbox, whatever +tags, names and addresses ask, and answers every request alike`, async () => {
    const accounts = Array.from({ length: 10 }, (_, i) => ({
      username: `inbox${i}`,
      email: `victim+${i}@example.com`,
    }));
    for (const [i, account] of accounts.entries()) {
      const answer = await post(
        port,
        '/api/v1/register/',
        { ...account, password: STRONG_PASSWORD, confirm_password: STRONG_PASSWORD },
        { localAddress: loopback(i) },
      );
      expect(answer.body).toEqual(okMessage('User created successfully'));
    }
    // Five by email and five by username for each account, each from a fresh address, at once.
    const requests = accounts.flatMap((account) =>
      Array.from({ length: 10 }, (_, i) => (i % 2 ? account.email : account.username)),
    );
    const answers = await Promise.all(
      requests.map((emailOrUsername, i) =>
        post(port, '/api/v1/generate/otp/', { emailOrUsername }, { localAddress: loopback(100 + i) }),
      ),
    );
    expect(answers.map((answer) => [answer.status, answer.body])).toEqual(Array(100).fill([200, otpSent]));
    await t.deliverMail();
    const otpMails = () =>
      smtp.received.filter(
        (mail) => mail.subject === 'OTP for Password Change' && /victim\+\d@/.test(mail.to.join()),
      );
    await smtp.until(
      () => otpMails().length >= MAILBOX_LIMIT.limit,
      () => `${otpMails().length} OTP mails`,
    );
    await t.deliverMail();
    expect(otpMails()).toHaveLength(MAILBOX_LIMIT.limit);
    // The inbox's bound is its own: another mailbox is mailed as before.
    await post(
      port,
      '/api/v1/register/',
      {
        username: 'bystander',
        email: 'bystander@example.com',
        password: STRONG_PASSWORD,
        confirm_password: STRONG_PASSWORD,
      },
      { localAddress: loopback(300) },
    );
    expect(
      (
        await post(
          port,
          '/api/v1/generate/otp/',
          { emailOrUsername: 'bystander' },
          { localAddress: loopback(301) },
        )
      ).body,
    ).toEqual(otpSent);
    await smtp.waitFor('bystander@example.com', 1);
  });
});

describe('IPv6 clients behind a trusted proxy', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const start = async (env: Record<string, string> = {}) => {
    t = await createTestApp({ env: { RATE_LIMIT: 'on', TRUSTED_PROXIES: '127.0.0.1', ...env } });
    return listen(t);
  };
  let sent = 0;
  /** A login of an identifier of its own, so only the address limit counts. */
  const login = (port: number, forwardedFor: string): Promise<PostAnswer> => {
    sent += 1;
    return post(
      port,
      '/api/v1/login/',
      { emailOrUsername: `nobody-${sent}`, password: 'x' },
      { localAddress: '127.0.0.1', headers: { 'X-Forwarded-For': forwardedFor } },
    );
  };
  const statuses = async (port: number, addresses: string[]) =>
    (await Promise.all(addresses.map((address) => login(port, address)))).map((answer) => answer.status);
  const expectTooMany = (answer: PostAnswer) => expect([answer.status, answer.body]).toEqual([429, tooMany]);
  const oneNetwork = (count: number) =>
    Array.from({ length: count }, (_, i) => `2001:db8:45:6:${i.toString(16)}::${i + 1}`);

  it(`gives one /64 one budget: of 40 logins from 40 of its addresses at once, ${ADDRESS_LIMIT.limit} are answered`, async () => {
    const port = await start();
    const answered = await statuses(port, oneNetwork(40));
    expect(answered.filter((status) => status === 200)).toHaveLength(ADDRESS_LIMIT.limit);
    expect(answered.filter((status) => status === 429)).toHaveLength(40 - ADDRESS_LIMIT.limit);
    // Another network behind the same balancer has a budget of its own.
    expect(await statuses(port, ['2001:db8:45:7::1'])).toEqual([200]);
  });

  it('counts one IPv6 address written five ways as one client', async () => {
    const port = await start({ CLIENT_IPV6_PREFIX: '128' });
    const spellings = [
      '2001:db8:45::1',
      '2001:DB8:45::1',
      '2001:0db8:0045:0000:0000:0000:0000:0001',
      '2001:db8:45:0:0:0:0:1',
      '2001:db8:45::0.0.0.1',
    ];
    const answered = await statuses(
      port,
      Array.from({ length: ADDRESS_LIMIT.limit }, (_, i) => spellings[i % 5]),
    );
    expect(answered).toEqual(Array(ADDRESS_LIMIT.limit).fill(200));
    for (const spelling of spellings) expectTooMany(await login(port, spelling));
    // With CLIENT_IPV6_PREFIX=128 a neighbour of the same /64 is a client of its own.
    expect(await statuses(port, ['2001:db8:45::2'])).toEqual([200]);
  });
});

describe('the RateLimit fields of the account endpoints', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT: 'on' } });
  });
  afterAll(async () => t.close());
  beforeEach(() => t.clock.freeze());
  afterEach(() => t.clock.reset());

  const fields = (answer: { headers: Record<string, unknown> }) => [
    answer.headers['ratelimit-policy'],
    answer.headers['ratelimit'],
  ];

  it('tell a login its quotas and its own counters, and on 429 the quota that refused', async () => {
    const policy = '"address";q=30;w=60, "identifier-address";q=10;w=900';
    const first = await t
      .http()
      .post('/api/v1/login/')
      .send({ emailOrUsername: 'fields', password: 'Wr0ng!pass' });
    expect(first.body).toEqual(accountFail('Invalid login credentials'));
    expect(fields(first)).toEqual([policy, '"address";r=29;t=60, "identifier-address";r=9;t=900']);
    for (let i = 1; i < 10; i += 1) {
      await t.http().post('/api/v1/login/').send({ emailOrUsername: 'fields', password: 'Wr0ng!pass' });
    }
    const refused = await t
      .http()
      .post('/api/v1/login/')
      .send({ emailOrUsername: 'fields', password: 'Wr0ng!pass' });
    expect([refused.status, refused.body]).toEqual([429, tooMany]);
    expect(fields(refused)).toEqual([policy, '"address";r=19;t=60, "identifier-address";r=0;t=900']);
    expect(refused.headers['retry-after']).toBe('900');
  });

  it('never tell a shared count (a mailbox, an identifier from everywhere) but on the 429 it gives', async () => {
    const register = (i: number) =>
      t
        .http()
        .post('/api/v1/register/')
        .send({
          username: `fields${i}`,
          email: `fields+${i}@example.com`,
          password: STRONG_PASSWORD,
          confirm_password: STRONG_PASSWORD,
        });
    const first = await register(0);
    expect(fields(first)).toEqual(['"address";q=30;w=60, "mailbox";q=10;w=900', '"address";r=29;t=60']);
    for (let i = 1; i < MAILBOX_LIMIT.limit; i += 1) await register(i);
    const refused = await register(MAILBOX_LIMIT.limit);
    expect([refused.status, refused.body]).toEqual([429, tooMany]);
    expect(fields(refused)).toEqual([
      '"address";q=30;w=60, "mailbox";q=10;w=900',
      '"address";r=19;t=60, "mailbox";r=0;t=900',
    ]);
    const otp = await t.http().post('/api/v1/generate/otp/').send({ emailOrUsername: 'fields0' });
    expect(fields(otp)).toEqual([
      '"address";q=30;w=60, "identifier-address";q=5;w=900, "identifier";q=30;w=3600',
      '"address";r=29;t=60, "identifier-address";r=4;t=900',
    ]);
  });

  it('are not sent with RATE_LIMIT=off', async () => {
    const off = await createTestApp();
    try {
      const answer = await off.http().post('/api/v1/login/').send({ emailOrUsername: 'x', password: 'y' });
      expect(fields(answer)).toEqual([undefined, undefined]);
    } finally {
      await off.close();
    }
  });
});

describe('registration bursts', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    appLog.take();
  });
  afterAll(async () => t.close());

  const register = (username: string, email: string) =>
    t
      .http()
      .post('/api/v1/register/')
      .send({ username, email, password: STRONG_PASSWORD, confirm_password: STRONG_PASSWORD });
  const tally = (answers: Array<{ status: number; body: { message?: unknown } }>) => {
    const counts: Record<string, number> = {};
    for (const answer of answers) {
      const key = `${answer.status} ${String(answer.body.message)}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  };

  it('answers 60 registrations of one name, of one email, and of names and emails crossed, each sent at once, with the contract’s messages and no error', async () => {
    expect(
      tally(
        await Promise.all(Array.from({ length: 60 }, (_, i) => register('burstname', `bn${i}@example.com`))),
      ),
    ).toEqual({
      '200 User created successfully': 1,
      '200 Username already exists': 59,
    });
    expect(
      tally(await Promise.all(Array.from({ length: 60 }, (_, i) => register(`be${i}`, 'burst@example.com')))),
    ).toEqual({
      '200 User created successfully': 1,
      '200 Email already exists': 59,
    });
    // Seven names and five emails crossed: at most five accounts, every other answer one of the two.
    const crossed = tally(
      await Promise.all(
        Array.from({ length: 60 }, (_, i) => register(`cross${i % 7}`, `cross${i % 5}@example.com`)),
      ),
    );
    const { '200 User created successfully': created = 0, ...refused } = crossed;
    expect(Object.values(refused).reduce((sum, n) => sum + n, 0)).toBe(60 - created);
    expect(Object.keys(refused).filter((key) => !key.endsWith(' already exists'))).toEqual([]);
    expect(created).toBeGreaterThanOrEqual(1);
    expect(created).toBeLessThanOrEqual(5);
    const [{ count }] = (await t.dataSource.query(
      "SELECT COUNT(*) AS count FROM users WHERE name LIKE 'cross%'",
    )) as Array<{ count: unknown }>;
    expect(Number(count)).toBe(created);
    expect(appLog.take()).toEqual([]);
  });
});
