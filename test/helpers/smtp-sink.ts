import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  /** The decoded text/plain part. */
  text: string;
  /** The decoded text/html part. */
  html: string;
  raw: string;
}

/** A real SMTP server on loopback that keeps what it receives, for the tests to read. */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  /** When set, the next messages are refused with a permanent error. */
  rejectAll = false;
  private server?: SMTPServer;
  private waiters: Array<() => void> = [];

  get port(): number {
    return (this.server!.server.address() as AddressInfo).port;
  }

  async start(): Promise<void> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (this.rejectAll) {
            callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
            return;
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          this.received.push({
            ...parseMessage(raw),
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((recipient) => recipient.address),
            raw,
          });
          callback();
          this.waiters.splice(0).forEach((wake) => wake());
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  clear(): void {
    this.received.length = 0;
  }

  /** The newest mail to this address received so far (see TestApp.deliverMail). */
  lastTo(address: string): ReceivedMail | undefined {
    return [...this.received].reverse().find((mail) => mail.to.includes(address));
  }

  /**
   * Waits until `count` mails to this address have arrived, without asking the app to
   * deliver: for the tests of the outbox worker itself. Fails after `timeoutMs`.
   */
  async waitFor(address: string, count = 1, timeoutMs = 15_000): Promise<ReceivedMail[]> {
    const arrived = () => this.received.filter((mail) => mail.to.includes(address));
    await this.until(
      () => arrived().length >= count,
      () => `${arrived().length} of ${count} mail(s) to ${address} arrived`,
      timeoutMs,
    );
    return arrived();
  }

  /**
   * Waits until `done()` holds, looking again at each mail received; fails after `timeoutMs`
   * with `failure()`. For mail another process of the same database may be sending.
   */
  async until(done: () => boolean, failure: () => string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(failure());
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

function parseMessage(raw: string): Pick<ReceivedMail, 'subject' | 'text' | 'html'> {
  const { headers, body } = splitHeaders(raw);
  const parts = collectParts(headers, body);
  return {
    subject: headers['subject'] ?? '',
    text: parts.find((part) => part.type === 'text/plain')?.content ?? '',
    html: parts.find((part) => part.type === 'text/html')?.content ?? '',
  };
}

function splitHeaders(raw: string): { headers: Record<string, string>; body: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw : raw.slice(0, split);
  const body = split === -1 ? '' : raw.slice(split + 4);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function collectParts(
  headers: Record<string, string>,
  body: string,
): Array<{ type: string; content: string }> {
  const contentType = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (contentType.startsWith('multipart/') && boundary) {
    return body
      .split(`--${boundary}`)
      .slice(1, -1)
      .flatMap((part) => {
        const inner = splitHeaders(part.replace(/^\r\n/, ''));
        return collectParts(inner.headers, inner.body);
      });
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  return [{ type: contentType.split(';')[0].trim().toLowerCase(), content: decodeBody(body, encoding) }];
}

function decodeBody(body: string, encoding: string): string {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = body
      .replace(/=\r\n/g, '')
      .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}
