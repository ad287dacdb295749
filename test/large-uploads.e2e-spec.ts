import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pluginState, signUpAs, validFields, type SignedInUser } from './helpers/marketplace';
import { curlLack, describeNeeding } from './helpers/prerequisites';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, type TestApp } from './helpers/test-app';

const MB = 1024 * 1024;
/** PLUGIN_UPLOAD_MAX_SIZE's default, which this suite keeps. */
const LIMIT = 262_144;
const TOO_LARGE = `{"status":"fail","message":"Plugin file exceeds maximum size of ${LIMIT} bytes"}`;
const UPLOAD_PATH = '/api/v1/community-plugins/upload';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The final answer in what a client received: 100 Continue skipped, the body cut at its Content-Length. */
function parseAnswer(raw: Buffer): Answer {
  let rest = raw;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`no complete answer in ${JSON.stringify(raw.toString('latin1'))}`);
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    rest = rest.subarray(end + 4);
    const status = Number(statusLine.split(' ')[1]);
    if (status === 100) continue;
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length']);
    return { status, headers, body: rest.subarray(0, length).toString('utf8') };
  }
}

/** A file of `size` bytes of Python comment, written in 1 MB steps (never held whole). */
function writePlugin(path: string, size: number): string {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(MB, '#');
  for (let written = 0; written < size; written += MB) writeSync(fd, chunk, 0, Math.min(MB, size - written));
  closeSync(fd);
  return path;
}

describeNeeding(curlLack(), 'uploads far over the limit, over a real socket', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let port: number;
  let dir: string;
  /** Resolves with the bytes the server read on its next connection, once it has closed it. */
  let nextConnection: Promise<number>;
  const watchNextConnection = (server: Server) => {
    nextConnection = new Promise((resolve) =>
      server.once('connection', (socket: Socket) => socket.once('close', () => resolve(socket.bytesRead))),
    );
  };

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp });
    alice = await signUpAs(t, smtp, 'alice');
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'svc-large-uploads-'));
    writePlugin(join(dir, '2mb.py'), 2 * MB);
    writePlugin(join(dir, '50mb.py'), 50 * MB);
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => watchNextConnection(t.app.getHttpServer() as Server));

  /** curl's multipart upload of a file on disk; its exit code and the answer it printed. */
  const curlUpload = (file: string, options: { expectContinue: boolean; token?: string }) =>
    new Promise<{ exitCode: number; stderr: string; answer: Answer }>((resolve) => {
      const args = [
        '-sS',
        '--max-time',
        '60',
        // The answer's status line and headers, then its body.
        '--dump-header',
        '-',
        '-H',
        options.expectContinue ? 'Expect: 100-continue' : 'Expect:',
        ...(options.token ? ['-H', `Authorization: Bearer ${options.token}`] : []),
        ...Object.entries(validFields('Huge plugin')).flatMap(([name, value]) => ['-F', `${name}=${value}`]),
        '-F',
        `plugin_file=@${join(dir, file)};type=text/x-python`,
        `http://127.0.0.1:${port}${UPLOAD_PATH}`,
      ];
      execFile('curl', args, { encoding: 'buffer', maxBuffer: MB }, (error, stdout, stderr) => {
        resolve({
          exitCode: error ? Number(error.code) : 0,
          stderr: stderr.toString('utf8'),
          answer: parseAnswer(stdout),
        });
      });
    });

  it.each([
    ['2mb.py', false],
    ['2mb.py', true],
    ['50mb.py', false],
    ['50mb.py', true],
  ])(
    '%s (Expect: 100-continue %s): 413 with the JSON envelope, then the connection closes',
    async (file, expectContinue) => {
      const before = await pluginState(t);
      const { exitCode, stderr, answer } = await curlUpload(file, { expectContinue, token: alice.token });
      expect({ exitCode, stderr }).toEqual({ exitCode: 0, stderr: '' });
      expect(answer).toMatchObject({ status: 413, body: TOO_LARGE, headers: { connection: 'close' } });
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      // curl stops sending when the answer comes: the server read a little past the limit, not the file.
      expect(await nextConnection).toBeLessThan(8 * MB);
      expect(await pluginState(t)).toEqual(before);
    },
  );

  it('answers a 401 before a large upload is read the same way: the answer, then the connection closes', async () => {
    const { exitCode, answer } = await curlUpload('50mb.py', { expectContinue: false });
    expect(exitCode).toBe(0);
    expect(answer).toMatchObject({
      status: 401,
      body: '{"status":"fail","message":"Unauthorized"}',
      headers: { connection: 'close' },
    });
    expect(await nextConnection).toBeLessThan(8 * MB);
  });

  it('answers a 2 MB JSON body (over the 100 KB of every other endpoint) with 413 the same way', async () => {
    const { exitCode, stderr, output } = await new Promise<{
      exitCode: number;
      stderr: string;
      output: Buffer;
    }>((resolve) =>
      execFile(
        'curl',
        [
          '-sS',
          '--max-time',
          '60',
          '--dump-header',
          '-',
          '-H',
          'Content-Type: application/json',
          '--data-binary',
          `@${join(dir, '2mb.py')}`,
          `http://127.0.0.1:${port}/api/v1/login/`,
        ],
        { encoding: 'buffer', maxBuffer: MB },
        (error, stdout, stderr) =>
          resolve({
            exitCode: error ? Number(error.code) : 0,
            stderr: stderr.toString('utf8'),
            output: stdout,
          }),
      ),
    );
    expect({ exitCode, stderr }).toEqual({ exitCode: 0, stderr: '' });
    expect(parseAnswer(output)).toMatchObject({
      status: 413,
      // An account endpoint's envelope: the members again under `data`.
      body:
        '{"status":"fail","message":"Request body too large",' +
        '"data":{"status":"fail","message":"Request body too large"}}',
      headers: { connection: 'close' },
    });
    expect(await nextConnection).toBeLessThan(8 * MB);
  });

  /**
   * A client on a raw socket: the request's head, the multipart preamble, then `send` bytes of
   * the file (of `declared` bytes in Content-Length), then, if it sent the whole file, the
   * closing boundary. It reads only after it has sent all it meant to, as simple clients do.
   */
  async function rawUpload(declared: number, send: number): Promise<Answer> {
    const boundary = 'svc-boundary-7MA4YWxkTrZu0gW';
    const fields = Object.entries(validFields('Huge plugin'))
      .map(
        ([name, value]) =>
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
      )
      .join('');
    const head = Buffer.from(
      `${fields}--${boundary}\r\nContent-Disposition: form-data; name="plugin_file"; filename="huge.py"\r\n` +
        'Content-Type: text/x-python\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    // Half-open allowed, as in most clients: it goes on sending after the server's FIN.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const write = (chunk: Buffer) =>
      new Promise<void>((resolve, reject) =>
        socket.write(chunk, (error) => (error ? reject(error) : resolve())),
      );
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    await write(
      Buffer.from(
        `POST ${UPLOAD_PATH} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${alice.token}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
          `Content-Length: ${head.length + declared + tail.length}\r\n\r\n`,
      ),
    );
    await write(head);
    const chunk = Buffer.alloc(64 * 1024, '#');
    for (let sent = 0; sent < send; sent += chunk.length)
      await write(chunk.subarray(0, Math.min(chunk.length, send - sent)));
    if (send === declared) await write(tail);
    // Now read: the answer, up to the end of its body, then hang up.
    await new Promise<void>((resolve, reject) => {
      const complete = () => {
        try {
          const answer = parseAnswer(Buffer.concat(received));
          if (Buffer.byteLength(answer.body) === Number(answer.headers['content-length'])) resolve();
        } catch {
          // not all of it yet
        }
      };
      socket.on('data', complete);
      socket.once('close', () => reject(new Error('closed before a whole answer')));
      complete();
    });
    socket.end();
    await closed;
    return parseAnswer(Buffer.concat(received));
  }

  it('answers a client that sends all 50 MB before it reads: the rest of the body is dropped, not held', async () => {
    const answer = await rawUpload(50 * MB, 50 * MB);
    expect(answer).toMatchObject({ status: 413, body: TOO_LARGE, headers: { connection: 'close' } });
    // Read to the end, past the answer (dropped as it came), and closed once the client hung up.
    expect(await nextConnection).toBeGreaterThan(50 * MB);
  });

  it('answers at the limit when Content-Length is over it: the client need not send the rest', async () => {
    // 50 MB declared, 300 KB sent; the client then waits for the answer.
    const answer = await rawUpload(50 * MB, 300 * 1024);
    expect(answer).toMatchObject({ status: 413, body: TOO_LARGE, headers: { connection: 'close' } });
    expect(await nextConnection).toBeLessThan(MB);
  });
});
