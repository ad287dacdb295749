import type { Mail } from '../mail/mail.service';
import { escapeHtml } from '../mail/html';

// No mail carries the username: it is text of whoever registered, who need not be the owner
// of the address the mail goes to (the address is not confirmed when an activation is sent).

/**
 * Whoever registered need not own the address, so the owner chooses: confirm (the password
 * chosen at registration is kept) or secure the address (the account is activated without
 * that password, and the owner sets one through the OTP mail).
 */
export function activationMail(to: string, links: { confirm: string; claim: string }): Mail {
  return {
    to,
    subject: 'Account Activation',
    html:
      `<p>Hello,</p>` +
      `<p>An account was registered with this email address.</p>` +
      `<p>If you registered it, please activate your account by opening this link and pressing ` +
      `"Confirm my email address":</p>` +
      `<p><a href="${escapeHtml(links.confirm)}">${escapeHtml(links.confirm)}</a></p>` +
      `<p>If you did not register, secure this address instead: the account is activated for you ` +
      `without the password whoever registered it chose, and you set your own through a one-time ` +
      `password mailed here. Open this link and press "I did not register: secure this address":</p>` +
      `<p><a href="${escapeHtml(links.claim)}">${escapeHtml(links.claim)}</a></p>` +
      `<p>The links expire in 1 hour. If you do neither, nobody can use the account until this address is confirmed.</p>`,
  };
}

/**
 * A new code says it expires in 5 minutes. A pending code mailed again (someone asked while
 * it was pending) keeps its life: the mail gives the time it ends.
 */
export function otpMail(to: string, otp: string, issued: { fresh: boolean; expiresAt: Date } = FRESH): Mail {
  const expiry = issued.fresh
    ? `<p>The OTP expires in 5 minutes.</p>`
    : `<p>This is the OTP already sent to you, mailed again because a code was asked for while it was ` +
      `still valid. It expires 5 minutes after it was first sent, at ${utcTime(issued.expiresAt)} UTC.</p>`;
  return {
    to,
    subject: 'OTP for Password Change',
    html:
      `<p>Hello,</p>` +
      `<p>Your OTP for the password change is <b>${otp}</b>.</p>` +
      expiry +
      `<p>If you did not ask for it, ignore this mail: the code is of no use to anyone without it.</p>`,
  };
}

const FRESH = { fresh: true, expiresAt: new Date(0) };

/** HH:MM:SS of a time, in UTC. */
function utcTime(at: Date): string {
  return at.toISOString().slice(11, 19);
}

/**
 * Sent once per lock (see AccountLocks). It carries nothing of whoever made the failed
 * logins: no name, identifier, address or password.
 */
export function accountLockedMail(to: string, resetLink: string): Mail {
  return {
    to,
    subject: 'Your account is locked',
    html:
      `<p>Hello,</p>` +
      `<p>Your account had 100 failed logins within an hour, so it is locked: nobody can ` +
      `log in to it, with any password, until you set a new one.</p>` +
      `<p>Set a new password here: <a href="${escapeHtml(resetLink)}">${escapeHtml(resetLink)}</a> ` +
      `(ask for a one-time password, which is mailed to this address, then enter it with your new password). ` +
      `That unlocks the account.</p>`,
  };
}

/** Sent when a claim cleared a password the owner had not proved (see docs/accounts-security.md). */
export function passwordToSetMail(to: string, resetLink: string): Mail {
  return {
    to,
    subject: 'Set your password',
    html:
      `<p>Hello,</p>` +
      `<p>Your email address is confirmed and your account is active, but it has no password yet. ` +
      `A password chosen when the account was registered is not kept, because anyone could have ` +
      `registered your address before you confirmed it.</p>` +
      `<p>Set your password here: <a href="${escapeHtml(resetLink)}">${escapeHtml(resetLink)}</a> ` +
      `(ask for a one-time password, which is mailed to this address, then enter it with your new password). ` +
      `After that you can log in.</p>`,
  };
}
