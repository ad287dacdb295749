import { escapeHtml } from '../../mail/html';
import type { Mail } from '../../mail/mail.service';

/** To the uploader when a version of their plugin is decided. */
export function versionDecidedMail(
  to: string,
  plugin: { name: string },
  version: string,
  decision: { status: 'approved' } | { status: 'rejected'; reason: string },
): Mail {
  const what = `${plugin.name} ${version}`;
  if (decision.status === 'approved') {
    return {
      to,
      subject: `Plugin approved: ${what}`,
      html: `<p>Your plugin <b>${escapeHtml(what)}</b> was approved and is in the catalogue.</p>`,
    };
  }
  return {
    to,
    subject: `Plugin rejected: ${what}`,
    html:
      `<p>Your plugin <b>${escapeHtml(what)}</b> was rejected.</p>` +
      `<p>Reason: ${escapeHtml(decision.reason)}</p>`,
  };
}
