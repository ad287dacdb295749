import { request } from 'node:http';
import { spawnApiProcess, waitUntilReady, type ObservedApiProcess } from './helpers/api-process';

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
  let api: ObservedApiProcess;
  let port: number;
  const lines = (): LogLine[] =>
    api
      .stdout()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LogLine);
  /** The request log line of a request id, once the server has written it (after answering). */
  const logOf = async (requestId: string): Promise<LogLine> => {
    await api.waitForOutput(() => lines().some((entry) => entry.req?.id === requestId));
    return lines().find((entry) => entry.req?.id === requestId)!;
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
    api = await spawnApiProcess({ LOG_LEVEL: 'info' });
    port = api.port;
    await waitUntilReady(port, api.child);
  });
  afterAll(async () => {
    api.child.kill('SIGTERM');
    await api.exited;
  });

  it('starts with one info line naming the address, one when its start-up work is done, and route mapping only at debug', async () => {
    await call('/api/v1/health', { id: 'start-1' });
    await logOf('start-1');
    // A first start also says which migrations it applied, what it seeded and that it claimed
    // the plugin directory and which key signs the plugin manifest.
    const firstStartOnly = new Set(['Migrations', 'Configuration', 'PluginFiles', 'PluginManifest']);
    const info = lines().filter(
      (line) => line.level === 30 && line.req === undefined && !firstStartOnly.has(String(line.context)),
    );
    expect(info).toHaveLength(2);
    expect(info[0].msg).toMatch(
      new RegExp(`^svc-api listening on http://127\\.0\\.0\\.1:${port} \\(SQLite `),
    );
    expect(info[1].msg).toMatch(
      /^Start-up work done \(plugin rows, interrupted test-runs\) \d+ ms after listening$/,
    );
    expect(api.stdout()).not.toContain('Mapped {');
  });

  it('logs one line per request with its id, method, redacted URL, peer address, status and time', async () => {
    const status = await call('/api/v1/sessions/?access_token=leak-me-1&active=true', {
      id: 'trace-7',
      // No proxy is trusted (TRUSTED_PROXIES unset): the header names nobody.
      headers: { Authorization: 'Bearer leak-me-2', 'X-Forwarded-For': '203.0.113.9' },
    });
    expect(status).toBe(401);
    const line = await logOf('trace-7');
    expect(line).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: {
        id: 'trace-7',
        method: 'GET',
        url: '/api/v1/sessions/?access_token=[Redacted]&active=true',
        remoteAddress: '127.0.0.1',
      },
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
    // Percent-encoded spellings reach the same handlers; the key is redacted on the decoded path.
    await call('/api/v1/verify/confirm%5Femail/leak-me-7', { id: 'secret-4' });
    await call('/email%2Dverify/leak-me-8', { id: 'secret-5', method: 'POST' });
    await call('/api/v1/verify/confirm_email/leak%2Dme-9', { id: 'secret-6' });
    expect((await logOf('secret-4')).req?.url).toBe('/api/v1/verify/confirm_email/[Redacted]');
    expect((await logOf('secret-5')).req?.url).toBe('/email-verify/[Redacted]');
    expect((await logOf('secret-6')).req?.url).toBe('/api/v1/verify/confirm_email/[Redacted]');
    // The claim link's key is the same key.
    await call('/api/v1/verify/claim_email/leak-me-10', { id: 'secret-7', method: 'POST' });
    await call('/email-claim/leak-me-11', { id: 'secret-8', method: 'POST' });
    expect((await logOf('secret-7')).req?.url).toBe('/api/v1/verify/claim_email/[Redacted]');
    expect((await logOf('secret-8')).req?.url).toBe('/email-claim/[Redacted]');
    await logOf('secret-1');
    await logOf('secret-3');
    expect(api.stdout() + api.stderr()).not.toMatch(/leak-me/);
  });
});
