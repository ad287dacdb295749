import { UsersService } from '../src/users/users.service';
import { PasswordHasher } from '../src/account/password-hasher.service';
import { TokenService } from '../src/auth/token.service';
import { mailedOtp, signUp, type TestUser } from './helpers/accounts';
import { okMessage as ok } from './helpers/envelopes';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

/**
 * A change that ends a user's sessions (new password, claim, deactivation, promotion,
 * demotion) raises the user's credential generation, and a token is honoured only under the
 * generation of the row its login read: so a login with the old password that is in flight
 * during the change gets a token that never works. Fired together, on SQLite and on MariaDB.
 */
describe('credentials end sessions, also in flight', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  const noRecord = async () => undefined;

  beforeAll(async () => {
    await smtp.start();
    // bcrypt at a real cost, so a login's compare overlaps the change as it does in production.
    t = await createTestApp({ smtp, env: { BCRYPT_COST: '10', RATE_LIMIT: 'off' } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const logIn = (user: TestUser) =>
    t.http().post('/api/v1/login/').send({ emailOrUsername: user.email, password: user.password });
  const tokenOf = (body: unknown) => (body as { message?: { 'jwt-token'?: string } }).message?.['jwt-token'];
  const statusWith = async (token: string) =>
    (await t.http().get('/api/v1/community-plugins/me/').set('Authorization', `Bearer ${token}`)).status;

  /**
   * Twelve logins with the user's password sent together with `change`, six before it and six
   * after: whichever way the server interleaves them, the tokens they got.
   */
  async function loginsDuring(user: TestUser, change: () => Promise<void>): Promise<string[]> {
    const logins = () => Array.from({ length: 6 }, async () => tokenOf((await logIn(user)).body));
    const answers = await Promise.all([...logins(), change().then(() => undefined), ...logins()]);
    return answers.filter((token): token is string => token !== undefined);
  }

  it('a login that read the user before a change records a token the guard refuses', async () => {
    const user = await signUp(t, smtp, 'stale');
    const read = await t.app.get(UsersService).findByEmail(user.email);
    await t.app.get(UsersService).demote(user.email, noRecord);
    await t.app.get(UsersService).promote(user.email, noRecord);
    const token = await t.app.get(TokenService).issue(read!);
    expect(await statusWith(token)).toBe(401);
    expect(await statusWith(user.token)).toBe(401);
  });

  it('no token of a login with the old password works after Password Change Successful', async () => {
    const user = await signUp(t, smtp, 'reset');
    await t.http().post('/api/v1/generate/otp/').send({ emailOrUsername: user.email }).expect(200);
    const otp = await mailedOtp(t, smtp, user.email);
    const tokens = await loginsDuring(user, async () => {
      const answer = await t
        .http()
        .post('/api/v1/new-password/')
        .send({ emailOrUsername: user.email, otp, password: 'N3w!Password' });
      expect(answer.body).toEqual(ok('Password Change Successful'));
    });
    const statuses = await Promise.all([user.token, ...tokens].map(statusWith));
    expect(statuses).toEqual(Array(tokens.length + 1).fill(401));
    expect(typeof tokenOf((await logIn({ ...user, password: 'N3w!Password' })).body)).toBe('string');
  });

  it('no token of a login during svc-admin deactivate works, neither after activate', async () => {
    const user = await signUp(t, smtp, 'deact');
    const users = t.app.get(UsersService);
    const deactivate = async () => {
      expect(await users.deactivate(user.email, noRecord)).toBe('changed');
    };
    // The first login compares its password only once the deactivation has committed: the
    // interleaving that left tokens alive, made certain rather than left to the scheduler.
    const hasher = t.app.get(PasswordHasher);
    const verify = hasher.verify.bind(hasher);
    jest.spyOn(hasher, 'verify').mockImplementationOnce(async (...args) => {
      await deactivate();
      return verify(...args);
    });
    const tokens = await loginsDuring(user, async () => undefined);
    jest.restoreAllMocks();
    expect(tokens.length).toBeGreaterThan(0);
    await users.activate(user.email, noRecord);
    const statuses = await Promise.all([user.token, ...tokens].map(statusWith));
    expect(statuses).toEqual(Array(tokens.length + 1).fill(401));
    const fresh = tokenOf((await logIn(user)).body);
    expect(await statusWith(fresh!)).toBe(200);
  });
});
