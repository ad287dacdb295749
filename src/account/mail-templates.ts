import type { Mail } from '../mail/mail.service';
import { escapeHtml } from '../mail/html';

export function activationMail(to: string, name: string, link: string): Mail {
  return {
    to,
    subject: 'Account Activation',
    html:
      `<p>Hello ${escapeHtml(name)},</p>` +
      `<p>Please activate your account by opening this link:</p>` +
      `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` +
      `<p>The link expires in 1 hour.</p>`,
  };
}

export function otpMail(to: string, name: string, otp: string): Mail {
  return {
    to,
    subject: 'OTP for Password Change',
    html:
      `<p>Hello ${escapeHtml(name)},</p>` +
      `<p>Your OTP for the password change is <b>${otp}</b>.</p>` +
      `<p>The OTP expires in 5 minutes.</p>`,
  };
}
