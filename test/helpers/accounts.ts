import type { TestApp } from './test-app';
import type { ReceivedMail, SmtpSink } from './smtp-sink';
import { okMessage } from './envelopes';

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
  expect(response.body).toEqual(okMessage('User created successfully'));
}

/**
 * Mail to `email` received since this was called, once `deliverMail` ran and (when a replica
 * of the same database claimed the job first) once it arrived.
 */
function mailsFrom(t: TestApp, smtp: SmtpSink, email: string, subject: string) {
  const matching = () => smtp.received.filter((mail) => mail.to.includes(email) && mail.subject === subject);
  const before = matching().length;
  return async (): Promise<ReceivedMail> => {
    await t.deliverMail();
    await smtp.until(
      () => matching().length > before,
      () => `no ${subject} mail to ${email}`,
    );
    return matching()[matching().length - 1];
  };
}

/** The key from the newest activation mail to the user (once queued mail is out), as a person would click it. */
export async function activationKey(t: TestApp, smtp: SmtpSink, email: string): Promise<string> {
  await t.deliverMail();
  const mail = smtp.lastTo(email);
  const key = /\/email-verify\/([0-9a-f-]{36})/.exec(mail?.text ?? '')?.[1];
  if (!key) throw new Error(`no activation link mailed to ${email}`);
  return key;
}

export async function activate(t: TestApp, smtp: SmtpSink, user: TestUser): Promise<void> {
  const activation = mailsFrom(t, smtp, user.email, 'Account Activation');
  await t.http().post('/api/v1/generate/confirm_email/').send({ email: user.email }).expect(200);
  const key = /\/email-verify\/([0-9a-f-]{36})/.exec((await activation()).text)?.[1];
  if (!key) throw new Error(`no activation link mailed to ${user.email}`);
  const response = await t.http().get(`/api/v1/verify/confirm_email/${key}`);
  expect(response.body).toEqual(okMessage('Email Verified'));
}

/** The OTP of the newest OTP mail to this address, once queued mail is out. */
export async function mailedOtp(t: TestApp, smtp: SmtpSink, email: string): Promise<string> {
  await t.deliverMail();
  // The newest OTP mail, not the newest mail: a "Set your password" mail from a confirmation
  // just before may be delivered after it.
  const mail = [...smtp.received]
    .reverse()
    .find((each) => each.to.includes(email) && each.subject === OTP_SUBJECT);
  return otpOf(mail, email);
}

const OTP_SUBJECT = 'OTP for Password Change';

function otpOf(mail: ReceivedMail | undefined, email: string): string {
  const otp = mail ? /\b(\d{6})\b/.exec(mail.text)?.[1] : undefined;
  if (!otp) throw new Error(`no OTP mailed to ${email}`);
  return otp;
}

/** The password reset of the spec: an OTP by mail, then new-password with it. */
export async function setPasswordByOtp(t: TestApp, smtp: SmtpSink, user: TestUser): Promise<void> {
  const otpMail = mailsFrom(t, smtp, user.email, OTP_SUBJECT);
  const generated = await t.http().post('/api/v1/generate/otp/').send({ emailOrUsername: user.email });
  expect(generated.body).toEqual(okMessage('Otp Send Successful'));
  const changed = await t
    .http()
    .post('/api/v1/new-password/')
    .send({
      emailOrUsername: user.email,
      otp: otpOf(await otpMail(), user.email),
      password: user.password,
    });
  expect(changed.body).toEqual(okMessage('Password Change Successful'));
}

/**
 * Registered and activated through the mailed link, then the password set again by OTP: a
 * confirmation clears the password chosen at registration for an admin address (and under
 * ACCOUNT_CONFIRMATION=claim), and keeps it otherwise, so this one helper serves every user.
 */
export async function registerAndActivate(t: TestApp, smtp: SmtpSink, user: TestUser): Promise<void> {
  await register(t, user);
  await activate(t, smtp, user);
  await setPasswordByOtp(t, smtp, user);
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
  await registerAndActivate(t, smtp, user);
  return { ...user, token: await login(t, user) };
}

/**
 * Signed up under an address listed in SVC_ADMIN_EMAILS, so an admin once activated (its
 * password set again by OTP, as an admin's must be).
 */
export async function signUpAdmin(
  t: TestApp,
  smtp: SmtpSink,
  email: string,
  prefix = 'admin',
): Promise<TestUser & { token: string }> {
  const user = { ...newUser(prefix), email };
  await registerAndActivate(t, smtp, user);
  return { ...user, token: await login(t, user) };
}
