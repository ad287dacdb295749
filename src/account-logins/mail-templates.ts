import type { Mail } from '../mail/mail.service';
import { escapeHtml } from '../mail/html';

/**
 * Sent to the owner after a password change made with the current password. It carries no
 * text of whoever made it (no address or User-Agent): the owner needs only to know that it
 * happened and what to do if it was not them.
 */
export function passwordChangedMail(to: string, at: Date, resetLink: string): Mail {
  return {
    to,
    subject: 'Your password was changed',
    html:
      `<p>Hello,</p>` +
      `<p>The password of your account was changed at ${at.toISOString().slice(0, 19).replace('T', ' ')} UTC, ` +
      `by a login that gave the old one. Every other login and every access token of the account ` +
      `has been ended.</p>` +
      `<p>If you did not change it, set a new password here: ` +
      `<a href="${escapeHtml(resetLink)}">${escapeHtml(resetLink)}</a> ` +
      `(ask for a one-time password, which is mailed to this address, then enter it with your new password).</p>`,
  };
}
