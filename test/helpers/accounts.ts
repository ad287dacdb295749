import type { TestApp } from './test-app';
import type { SmtpSink } from './smtp-sink';

export const STRONG_PASSWORD = 'Str0ng!Passw0rd';

export interface TestUser {
  username: string;
  email: string;
  password: string;
}

let counter = 0;
export function newUser(prefix = 'user'): TestUser {
  counter += 1;
  return {
    username: `${prefix}${counter}`,
    email: `${prefix}${counter}@example.com`,
    password: STRONG_PASSWORD,
  };
}

export async function register(t: TestApp, user: TestUser): Promise<void> {
  const response = await t.http().post('/api/v1/register/').send({
    username: user.username,
    email: user.email,
    password: user.password,
    confirm_password: user.password,
  });
  expect(response.body).toEqual({ status: 'success', message: 'User created successfully' });
}

/** The key from the newest activation mail to the user, as a person would click it. */
export function activationKey(smtp: SmtpSink, email: string): string {
  const mail = smtp.lastTo(email);
  const key = /\/email-verify\/([0-9a-f-]{36})/.exec(mail?.text ?? '')?.[1];
  if (!key) throw new Error(`no activation link mailed to ${email}`);
  return key;
}

export async function activate(t: TestApp, smtp: SmtpSink, user: TestUser): Promise<void> {
  await t.http().post('/api/v1/generate/confirm_email/').send({ email: user.email }).expect(200);
  const response = await t.http().get(`/api/v1/verify/confirm_email/${activationKey(smtp, user.email)}`);
  expect(response.body).toEqual({ status: 'success', message: 'Email Verified' });
}

export async function login(t: TestApp, user: TestUser): Promise<string> {
  const response = await t
    .http()
    .post('/api/v1/login/')
    .send({ emailOrUsername: user.username, password: user.password })
    .expect(200);
  const token = (response.body as { message: { 'jwt-token'?: string } }).message['jwt-token'];
  if (!token) throw new Error(`login failed: ${JSON.stringify(response.body)}`);
  return token;
}

/** Registered, activated through the mailed link, logged in. */
export async function signUp(
  t: TestApp,
  smtp: SmtpSink,
  prefix = 'user',
): Promise<TestUser & { token: string }> {
  const user = newUser(prefix);
  await register(t, user);
  await activate(t, smtp, user);
  return { ...user, token: await login(t, user) };
}
