import { spawn } from 'node:child_process';
import type { SpawnOptions } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
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

/** `npm start` in a fresh data directory on a free port, with these extras in its environment. */
function npmStart(port: number, data: string, extra: Record<string, string>, options: SpawnOptions) {
  // --ignore-scripts skips the prestart build: the test run's global set-up checked dist/.
  return spawn('npm', ['start', '--ignore-scripts', '--silent'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      DATABASE_URL: `sqlite:${join(data, 'svc.sqlite')}`,
      COMMUNITY_PLUGIN_DIR: join(data, 'plugins'),
      JWT_SECRET: TEST_JWT_SECRET,
      ...extra,
    },
    ...options,
  });
}

/** The README's `npm start`, stopped as a service manager would, and as a terminal's Ctrl-C does. */
describe('npm start', () => {
  it('stops the server with one SIGTERM to npm', async () => {
    const port = await freePort();
    const data = mkdtempSync(join(tmpdir(), 'svc-npm-start-'));
    const npm = npmStart(port, data, { LOG_LEVEL: 'silent' }, { stdio: 'ignore' });
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

  it('shuts down cleanly on a Ctrl-C to its process group, which npm passes on too', async () => {
    const port = await freePort();
    const data = mkdtempSync(join(tmpdir(), 'svc-npm-start-'));
    // A group of its own, as a terminal's foreground job: npm, and the server its script execs.
    const npm = npmStart(
      port,
      data,
      { LOG_LEVEL: 'info' },
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let output = '';
    npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const npmExited = new Promise<number | null>((resolve) => npm.once('close', (code) => resolve(code)));
    try {
      await waitUntilReady(port, npm);
      // What the terminal does on Ctrl-C: SIGINT to every process of the foreground group.
      process.kill(-npm.pid!, 'SIGINT');
      expect({ code: await npmExited, shutDown: output.includes('"msg":"Shut down"') }).toEqual({
        code: 0,
        shutDown: true,
      });
      expect(output).toMatch(/SIGINT received: new connections are refused/);
      // SQLite closed: its write-ahead log was checkpointed and removed with its index.
      expect(readdirSync(data).filter((name) => name.startsWith('svc.sqlite'))).toEqual(['svc.sqlite']);
      expect(await connectionError(port)).toBe('ECONNREFUSED');
    } finally {
      if (npm.exitCode === null) process.kill(-npm.pid!, 'SIGKILL');
    }
  }, 120_000);
});
