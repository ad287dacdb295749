import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyDatabase, testDatabaseUrl } from './helpers/database';

const ROOT = join(__dirname, '..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function post(
  port: number,
  path: string,
  body: object,
): Promise<{ status: number; body: unknown; connection?: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const call = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
            connection: response.headers.connection,
          }),
        );
      },
    );
    call.on('error', reject);
    call.end(payload);
  });
}

async function waitUntilReady(port: number, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    const ready = await new Promise<boolean>((resolve) => {
      const probe = httpRequest({ host: '127.0.0.1', port, path: '/api/v1/health' }, (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      });
      probe.on('error', () => resolve(false));
      probe.end();
    });
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not become ready');
}

/** The real entrypoint as a process: SIGTERM lets requests in flight finish, then it exits 0. */
describe('graceful shutdown', () => {
  let child: ChildProcess;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('finishes the logins in flight, refuses new connections and exits 0', async () => {
    const databaseUrl = testDatabaseUrl();
    await emptyDatabase(databaseUrl);
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-shutdown-'));
    child = spawn(
      process.execPath,
      ['-r', join(ROOT, 'test/helpers/ts-register.js'), join(ROOT, 'src/main.ts')],
      {
        cwd: dataDir,
        env: {
          PATH: process.env.PATH,
          PORT: String(port),
          DATABASE_URL: databaseUrl,
          JWT_SECRET: 'shutdown-test-secret-0123456789abcdef',
          // Slow enough hashing that the logins are surely in flight when the signal comes.
          BCRYPT_COST: '13',
          RATE_LIMIT: 'off',
          LOG_LEVEL: 'silent',
        },
        stdio: 'ignore',
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitUntilReady(port, child);

    const logins = Array.from({ length: 4 }, () =>
      post(port, '/api/v1/login/', { emailOrUsername: 'nobody', password: 'Wr0ng!pass' }),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    child.kill('SIGTERM');

    const answers = await Promise.all(logins);
    for (const answer of answers) {
      expect(answer).toEqual({
        status: 200,
        body: { status: 'fail', message: 'Invalid login credentials' },
        connection: 'close',
      });
    }
    await expect(post(port, '/api/v1/login/', { emailOrUsername: 'x', password: 'y' })).rejects.toThrow(
      /ECONNREFUSED/,
    );
    expect(await exited).toBe(0);
  }, 60_000);
});
