import { ADDRESS_LIMIT, IDENTIFIER_LIMIT } from '../src/rate-limit/rate-limit.module';
import { createTestApp, TestApp } from './helpers/test-app';

const tooMany = { status: 'fail', message: 'Too many requests' };

describe('rate limits on the account endpoints', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT: 'on' } });
  });
  afterAll(() => t.close());

  it('limits attempts per identifier with HTTP 429 Too many requests, whatever else varies', async () => {
    const attempt = (password: string) =>
      t.http().post('/api/v1/login/').send({ emailOrUsername: 'Target@Example.com', password });
    for (let i = 0; i < IDENTIFIER_LIMIT.limit; i += 1) {
      expect((await attempt(`guess-${i}`).expect(200)).body.message).toBe('Invalid login credentials');
    }
    const blocked = await t
      .http()
      .post('/api/v1/login/')
      .send({ emailOrUsername: 'target@example.com', password: 'again' });
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual(tooMany);
    // Another identifier is not blocked by the first one's budget.
    expect(
      (await t.http().post('/api/v1/login/').send({ emailOrUsername: 'other', password: 'x' })).status,
    ).toBe(200);
  });

  it('limits requests per client address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= ADDRESS_LIMIT.limit; i += 1) {
      const response = await t
        .http()
        .post('/api/v1/generate/otp/')
        .send({ emailOrUsername: `someone-${i}` });
      statuses.push(response.status);
      if (response.status === 429) expect(response.body).toEqual(tooMany);
    }
    expect(statuses.slice(0, ADDRESS_LIMIT.limit).every((status) => status === 200)).toBe(true);
    expect(statuses[ADDRESS_LIMIT.limit]).toBe(429);
  });

  it('covers register, both generate endpoints, verify/otp and new-password', async () => {
    const routes = ['register/', 'generate/confirm_email/', 'verify/otp/', 'new-password/'];
    for (const route of routes) {
      let last = 0;
      for (let i = 0; i <= IDENTIFIER_LIMIT.limit; i += 1) {
        last = (
          await t
            .http()
            .post(`/api/v1/${route}`)
            .send({ email: 'same@example.com', emailOrUsername: 'same', otp: '000000' })
        ).status;
      }
      expect([route, last]).toEqual([route, 429]);
    }
  });
});

describe('RATE_LIMIT=off', () => {
  it('lets every attempt through', async () => {
    const t = await createTestApp({ env: { RATE_LIMIT: 'off' } });
    try {
      for (let i = 0; i <= IDENTIFIER_LIMIT.limit + 1; i += 1) {
        await t.http().post('/api/v1/login/').send({ emailOrUsername: 'target', password: 'x' }).expect(200);
      }
    } finally {
      await t.close();
    }
  });
});
