import type { Mail } from '../mail/mail.service';
import { escapeHtml } from '../mail/html';

// No mail carries the username: it is text of whoever registered, who need not be the owner
// of the address the mail goes to (the address is not confirmed when an activation is sent).

export function activationMail(to: string, link: string): Mail {
  return {
    to,
    subject: 'Account Activation',
    html:
      `<p>Hello,</p>` +
      `<p>Please activate your account by opening this link:</p>` +
      `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` +
      `<p>The link expires in 1 hour.</p>` +
      `<p>If you did not register, ignore this mail: nobody can use the account until this address is confirmed.</p>`,
  };
}

export function otpMail(to: string, otp: string): Mail {
  return {
    to,
    subject: 'OTP for Password Change',
    html:
      `<p>Hello,</p>` +
      `<p>Your OTP for the password change is <b>${otp}</b>.</p>` +
      `<p>The OTP expires in 5 minutes.</p>`,
  };
}

/** Sent when a confirmation cleared a password the owner had not proved (see docs/accounts-security.md). */
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
