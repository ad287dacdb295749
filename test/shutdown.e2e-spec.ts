import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, post, waitUntilReady } from './helpers/api-process';
import { emptyDatabase, testDatabaseUrl } from './helpers/database';
import { accountFail } from './helpers/envelopes';

const ROOT = join(__dirname, '..');

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
    for (const { status, body, connection } of answers) {
      expect({ status, body, connection }).toEqual({
        status: 200,
        body: accountFail('Invalid login credentials'),
        connection: 'close',
      });
    }
    await expect(post(port, '/api/v1/login/', { emailOrUsername: 'x', password: 'y' })).rejects.toThrow(
      /ECONNREFUSED/,
    );
    expect(await exited).toBe(0);
  }, 60_000);
});
