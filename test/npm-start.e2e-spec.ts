import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitUntilReady } from './helpers/api-process';
import { TEST_JWT_SECRET } from './helpers/test-app';

const ROOT = join(__dirname, '..');

function connectionError(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
  });
}

/** The README's `npm start`, stopped as a service manager would: one SIGTERM to npm's own pid. */
describe('npm start', () => {
  it('stops the server with one SIGTERM to npm', async () => {
    const port = await freePort();
    const data = mkdtempSync(join(tmpdir(), 'svc-npm-start-'));
    // --ignore-scripts skips the prestart build: the test run's global set-up checked dist/.
    const npm = spawn('npm', ['start', '--ignore-scripts', '--silent'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        DATABASE_URL: `sqlite:${join(data, 'svc.sqlite')}`,
        COMMUNITY_PLUGIN_DIR: join(data, 'plugins'),
        JWT_SECRET: TEST_JWT_SECRET,
        LOG_LEVEL: 'silent',
      },
      stdio: 'ignore',
    });
    const npmExited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    try {
      await waitUntilReady(port, npm);
      npm.kill('SIGTERM');
      await npmExited;
      // npm exits once its script's process has: the port refuses, no orphan answers there.
      expect(await connectionError(port)).toBe('ECONNREFUSED');
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
    }
  }, 120_000);
});
