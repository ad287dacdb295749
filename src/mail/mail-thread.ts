import { writeSync } from 'node:fs';
import { createTransport, type Transporter } from 'nodemailer';
import { workerData } from 'piscina';
import type { SmtpConfig } from '../config/app-config';
import { htmlToText } from './html';

/** What the thread is started with (piscina's workerData). */
export interface MailThreadSettings {
  /** null: no SMTP_HOST, each mail is printed to stdout instead. */
  smtp: SmtpConfig | null;
  from: string;
}

export interface MailTask {
  to: string;
  subject: string;
  html: string;
  /** false: the task is dropped here. The event loop did the same work as for a mail sent. */
  deliver: boolean;
}

/** Bounded waits: a dead SMTP server fails the attempt (the caller retries), it does not hang it. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

let transport: Transporter | undefined;

/**
 * The mail thread (see MailService): nodemailer's work, several milliseconds of CPU per mail
 * (building the message, the SMTP conversation), and the printing of mails without SMTP, are
 * done here rather than on the event loop that answers requests. Without SMTP the text goes
 * straight to the process's stdout (file descriptor 1), as one write per mail.
 */
export default async function deliverInThread(task: MailTask): Promise<void> {
  if (!task.deliver) return;
  const settings = workerData as MailThreadSettings;
  const text = htmlToText(task.html);
  if (!settings.smtp) {
    writeSync(
      1,
      [`----- mail to ${task.to} -----`, `Subject: ${task.subject}`, '', text, '-----', ''].join('\n'),
    );
    return;
  }
  const { host, port, secure, user, password } = settings.smtp;
  transport ??= createTransport(
    { host, port, secure, auth: user ? { user, pass: password ?? '' } : undefined, ...SMTP_TIMEOUTS },
    { from: settings.from },
  );
  await transport.sendMail({ to: task.to, subject: task.subject, html: task.html, text });
}
