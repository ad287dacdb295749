import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitUntilReady } from './helpers/api-process';
import { TEST_JWT_SECRET } from './helpers/test-app';

const ROOT = join(__dirname, '..');

interface LogLine {
  level: number;
  msg?: string;
  context?: string;
  req?: { id: string; method: string; url: string; remoteAddress: string };
  res?: { statusCode: number };
  responseTime?: number;
}

/**
 * The log as an operator reads it: the real entrypoint as its own process at LOG_LEVEL=info,
 * its stdout parsed line by line. The database does not matter here: SQLite in a temp dir.
 */
describe('logging (a real process at info level)', () => {
  let child: ChildProcess;
  let port: number;
  let output = '';
  const lines = (): LogLine[] =>
    output
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LogLine);
  /** The request log line of a request id, once the server has written it (after answering). */
  const logOf = async (requestId: string): Promise<LogLine> => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const line = lines().find((entry) => entry.req?.id === requestId);
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no log line for request ${requestId}:\n${output}`);
  };
  /** One request on its own connection (none kept alive to hold up the shutdown); its status. */
  const call = (
    path: string,
    init: { id: string; method?: string; headers?: Record<string, string>; body?: string },
  ) =>
    new Promise<number>((resolve, reject) => {
      const sent = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: init.method ?? 'GET',
          agent: false,
          headers: { ...init.headers, 'X-Request-Id': init.id },
        },
        (response) => response.resume().on('end', () => resolve(response.statusCode ?? 0)),
      );
      sent.on('error', reject).end(init.body);
    });

  beforeAll(async () => {
    port = await freePort();
    child = spawn(
      process.execPath,
      ['-r', join(ROOT, 'test/helpers/ts-register.js'), join(ROOT, 'src/main.ts')],
      {
        cwd: mkdtempSync(join(tmpdir(), 'svc-log-')),
        env: {
          PATH: process.env.PATH,
          PORT: String(port),
          JWT_SECRET: TEST_JWT_SECRET,
          BCRYPT_COST: '4',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await waitUntilReady(port, child);
  }, 60_000);
  afterAll(async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });

  it('starts with one info line naming the address, and route mapping only at debug', async () => {
    await call('/api/v1/health', { id: 'start-1' });
    await logOf('start-1');
    // A first start also says which migrations it applied and what it seeded.
    const firstStartOnly = new Set(['Migrations', 'Configuration']);
    const info = lines().filter(
      (line) => line.level === 30 && line.req === undefined && !firstStartOnly.has(String(line.context)),
    );
    expect(info).toHaveLength(1);
    expect(info[0].msg).toMatch(
      new RegExp(`^svc-api listening on http://127\\.0\\.0\\.1:${port} \\(SQLite `),
    );
    expect(output).not.toContain('Mapped {');
  });

  it('logs one line per request with its id, method, redacted URL, status and time', async () => {
    const status = await call('/api/v1/sessions/?access_token=leak-me-1&active=true', {
      id: 'trace-7',
      headers: { Authorization: 'Bearer leak-me-2' },
    });
    expect(status).toBe(401);
    const line = await logOf('trace-7');
    expect(line).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { id: 'trace-7', method: 'GET', url: '/api/v1/sessions/?access_token=[Redacted]&active=true' },
      res: { statusCode: 401 },
    });
    expect(typeof line.responseTime).toBe('number');
    expect(lines().filter((entry) => entry.req?.id === 'trace-7')).toHaveLength(1);
  });

  it('never writes a password, a token, an OTP or an activation key', async () => {
    await call('/api/v1/login/', {
      id: 'secret-1',
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ emailOrUsername: 'nobody', password: 'leak-me-3' }),
    });
    await call('/api/v1/verify/confirm_email/leak-me-4', { id: 'secret-2' });
    await call('/api/v1/new-password/?otp=leak-me-5&password=leak-me-6', { id: 'secret-3', method: 'POST' });
    expect((await logOf('secret-2')).req?.url).toBe('/api/v1/verify/confirm_email/[Redacted]');
    await logOf('secret-1');
    await logOf('secret-3');
    expect(output).not.toMatch(/leak-me/);
  });
});
