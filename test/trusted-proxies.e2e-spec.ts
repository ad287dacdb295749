import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ADDRESS_LIMIT } from '../src/rate-limit/account-rate-limit';
import { post, type PostAnswer } from './helpers/api-process';
import { accountFail } from './helpers/envelopes';
import { createTestApp, type TestApp } from './helpers/test-app';

/**
 * The address limits behind a balancer, over real HTTP: the test is the balancer (127.0.0.1)
 * and says who its clients are in X-Forwarded-For.
 */
describe('TRUSTED_PROXIES: whose address the limits count', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function start(trustedProxies: string): Promise<number> {
    t = await createTestApp({ env: { RATE_LIMIT: 'on', TRUSTED_PROXIES: trustedProxies } });
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /** One request to a route limited per address; a new identifier each time, so only the address limit counts. */
  let sent = 0;
  const otpRequest = (port: number, forwardedFor: string): Promise<PostAnswer> => {
    sent += 1;
    return post(
      port,
      '/api/v1/generate/otp/',
      { emailOrUsername: `someone-${sent}` },
      { localAddress: '127.0.0.1', headers: { 'X-Forwarded-For': forwardedFor } },
    );
  };
  /** Sent at once: the answers are evened out in time, so one by one would take a minute. */
  const statuses = async (port: number, forwardedFor: (i: number) => string, count: number) =>
    (await Promise.all(Array.from({ length: count }, (_, i) => otpRequest(port, forwardedFor(i))))).map(
      (answer) => answer.status,
    );
  const expectTooMany = (answer: PostAnswer) =>
    expect([answer.status, answer.body]).toEqual([429, accountFail('Too many requests')]);

  it('through a trusted hop, limits each X-Forwarded-For client apart, by the right-most untrusted address', async () => {
    const port = await start('127.0.0.1, 10.0.0.0/8');
    const allowed = Array<number>(ADDRESS_LIMIT.limit).fill(200);
    expect(await statuses(port, () => '203.0.113.7', ADDRESS_LIMIT.limit)).toEqual(allowed);
    expectTooMany(await otpRequest(port, '203.0.113.7'));
    // What the client itself wrote left of its address is not believed: still 203.0.113.7.
    expectTooMany(await otpRequest(port, '198.51.100.99, 203.0.113.7'));
    // Behind a second trusted hop (10.1.2.3), the client is the address before it.
    expectTooMany(await otpRequest(port, '203.0.113.7, 10.1.2.3'));
    // Another client behind the same balancer has a budget of its own.
    expect(await statuses(port, () => '203.0.113.8', ADDRESS_LIMIT.limit)).toEqual(allowed);
    expectTooMany(await otpRequest(port, '203.0.113.8'));
  });

  it('from an untrusted hop, a forged X-Forwarded-For changes nothing: its requests share one limit', async () => {
    // A proxy is trusted, but not the peer these requests come from (127.0.0.1).
    const port = await start('10.0.0.1');
    expect(await statuses(port, (i) => `203.0.113.${i + 1}`, ADDRESS_LIMIT.limit)).toEqual(
      Array<number>(ADDRESS_LIMIT.limit).fill(200),
    );
    expectTooMany(await otpRequest(port, '198.51.100.1'));
    expectTooMany(await otpRequest(port, '198.51.100.2, 10.0.0.1'));
  });
});
