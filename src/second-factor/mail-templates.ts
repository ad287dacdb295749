import type { Mail } from '../mail/mail.service';
import { escapeHtml } from '../mail/html';

/*
 * The owner's mails about the second factor, like the password-changed mail: no text of
 * whoever made the change (no address or User-Agent), only what happened and what to do.
 */

const utc = (at: Date) => `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
const resetLine = (resetLink: string) =>
  `<a href="${escapeHtml(resetLink)}">${escapeHtml(resetLink)}</a> ` +
  `(ask for a one-time password, which is mailed to this address, then enter it with your new password)`;

export const SECOND_FACTOR_SUBJECTS = {
  on: 'A second factor was turned on for your account',
  off: 'The second factor of your account was turned off',
  reset: 'An administrator turned off the second factor of your account',
} as const;

/** After a confirmation: turned on by a login that gave the password; every other login ended. */
export function secondFactorOnMail(to: string, at: Date, resetLink: string): Mail {
  return {
    to,
    subject: SECOND_FACTOR_SUBJECTS.on,
    html:
      `<p>Hello,</p>` +
      `<p>A second factor (an authenticator app) was turned on for your account at ${utc(at)}, by a login ` +
      `that gave your password. From now on logging in needs a code of that app as well. Every other ` +
      `login and every access token of the account has been ended.</p>` +
      `<p>If you did not turn it on, someone knows your password: set a new one here: ${resetLine(resetLink)}, ` +
      `and ask the service's administrators to turn off the second factor that is not yours.</p>`,
  };
}

/** After the owner's turning off, with a current code (`totp`) or a recovery code. */
export function secondFactorOffMail(
  to: string,
  at: Date,
  method: 'totp' | 'recovery_code',
  resetLink: string,
): Mail {
  const how = method === 'totp' ? 'a code of the authenticator app' : 'a recovery code';
  return {
    to,
    subject: SECOND_FACTOR_SUBJECTS.off,
    html:
      `<p>Hello,</p>` +
      `<p>The second factor of your account was turned off at ${utc(at)}, with ${how}. Logging in needs ` +
      `the password alone again.</p>` +
      `<p>If you did not turn it off, set a new password here: ${resetLine(resetLink)}, then turn the second ` +
      `factor on again.</p>`,
  };
}

/** After `svc-admin second-factor reset`: every login ended; the owner logs in with the password alone. */
export function secondFactorResetMail(to: string, at: Date, resetLink: string): Mail {
  return {
    to,
    subject: SECOND_FACTOR_SUBJECTS.reset,
    html:
      `<p>Hello,</p>` +
      `<p>An administrator of the service turned off the second factor of your account at ${utc(at)}, and ` +
      `every login and access token of the account has been ended. Logging in needs the password alone ` +
      `until you turn a second factor on again.</p>` +
      `<p>If you did not ask for this, set a new password here: ${resetLine(resetLink)}.</p>`,
  };
}
