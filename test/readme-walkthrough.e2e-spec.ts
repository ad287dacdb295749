import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './helpers/api-process';
import { okData, okMessage } from './helpers/envelopes';
import { describeNeeding } from './helpers/prerequisites';

/*
 * The README's walkthrough, as a person pastes it: the ```sh block under "## A walkthrough of
 * the whole product" is read from README.md and run by bash in the checkout. Its `npm start`
 * runs prestart's build, incremental after npm test's pretest (a few seconds, nothing
 * rewritten). Two things differ from a paste, both outside what the block does:
 * - the port: the block says 8010; the test replaces 8010 in the text it read with a port
 *   that was free a moment ago, so that it never meets another server on 8010;
 * - lines appended to the text (never to the README) echo what the block keeps in variables
 *   ($TOKEN, $SESSION, $PLUGIN), since those answers are not printed.
 * bash gets a clean environment (PATH, HOME, and TMPDIR, a directory of the test's, so the
 * block's `mktemp -d` is inside it and removed with it); it leads its own process group, which
 * is killed at the end whatever happened, npm and the server with it.
 */

const ROOT = join(__dirname, '..');
const HEADING = '## A walkthrough of the whole product';
const SOURCE = 'DESCRIPTION = "Says hello"\n\n\ndef run(PluginInfo):\n    return []\n';

function walkthroughBlock(): string {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  const heading = lines.indexOf(HEADING);
  if (heading === -1) throw new Error(`README.md has no line "${HEADING}"`);
  const open = lines.indexOf('```sh', heading);
  const close = lines.indexOf('```', open + 1);
  const next = lines.findIndex((line, index) => index > heading && line.startsWith('## '));
  if (open === -1 || close === -1 || (next !== -1 && open > next)) {
    throw new Error(`no \`\`\`sh block under "${HEADING}" in README.md`);
  }
  return lines.slice(open + 1, close).join('\n') + '\n';
}

/** The block with its port replaced; the README names it in the server's PORT and in $API. */
function onPort(block: string, port: number): string {
  expect(block).toContain('PORT=8010 ');
  expect(block).toContain('API=http://127.0.0.1:8010/api/v1');
  return block.replace(/\b8010\b/g, String(port));
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function groupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** ms from the start to the first stdout chunk containing `watch`, if any. */
  seenAfterMs?: number;
  /** The server's log, read before its directory is removed. */
  serverLog: string;
  /** Whether every process of the block had ended on its own within `settleMs` after bash. */
  endedByItself: boolean;
}

/**
 * Runs `script` with bash in the checkout, at most `limitMs`; then kills whatever of its
 * process group is left and removes its temporary directory.
 */
async function runBash(
  script: string,
  options: { limitMs: number; settleMs: number; watch?: string },
): Promise<Run> {
  const temp = mkdtempSync(join(tmpdir(), 'svc-readme-'));
  const file = join(temp, 'walkthrough.sh');
  writeFileSync(file, script);
  const started = Date.now();
  const bash = spawn('bash', [file], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: temp },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pgid = bash.pid!;
  let stdout = '';
  let stderr = '';
  let seenAfterMs: number | undefined;
  bash.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    if (options.watch && seenAfterMs === undefined && stdout.includes(options.watch)) {
      seenAfterMs = Date.now() - started;
    }
  });
  bash.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `the block did not end within ${options.limitMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`,
            ),
          ),
        options.limitMs,
      );
      bash.once('close', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    const endedByItself = await groupGone(pgid, options.settleMs);
    const dirs = readdirSync(temp).filter((name) => name.startsWith('tmp.'));
    const serverLog = dirs.length === 1 ? readFileSync(join(temp, dirs[0], 'server.log'), 'utf8') : '';
    return { code, stdout, stderr, seenAfterMs, serverLog, endedByItself };
  } finally {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // ESRCH: the group has ended already.
    }
    await groupGone(pgid, 10_000);
    rmSync(temp, { recursive: true, force: true });
  }
}

/** A line of the block's stdout: its JSON, or the text when it is not JSON. */
function parsed(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return line;
  }
}

/** Adds the end of the server's log to a failed expectation's message. */
function withServerLog(run: Run, check: () => void): void {
  try {
    check();
  } catch (error) {
    const tail = run.serverLog.split('\n').slice(-40).join('\n');
    (error as Error).message += `\n\nbash's stderr:\n${run.stderr}\nend of server.log:\n${tail}`;
    throw error;
  }
}

const curlLack =
  spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0
    ? null
    : { missing: 'curl on PATH', remedy: 'apt-get install -y --no-install-recommends curl' };

const onSqliteRun = process.env.TEST_DATABASE_URL ? describe.skip : describe;

describeNeeding(curlLack, 'the README walkthrough', () => {
  // Its server has its own SQLite database whatever TEST_DATABASE_URL says, so it runs once:
  // in `npm test` (SQLite), and is skipped in the MariaDB run, which would only repeat it.
  onSqliteRun('pasted as printed (run where TEST_DATABASE_URL is unset: it has its own SQLite)', () => {
    it('answers every step, from registration to the approved plugin in the catalogue', async () => {
      const port = await freePort();
      const script =
        onPort(walkthroughBlock(), port) +
        'echo "TOKEN=$TOKEN"\necho "SESSION=$SESSION"\necho "PLUGIN=$PLUGIN"\n';
      const run = await runBash(script, { limitMs: 180_000, settleMs: 20_000 });
      withServerLog(run, () => {
        const lines = run.stdout.trimEnd().split('\n');
        const answers = lines.slice(0, -3).map(parsed);
        const [token, session, plugin] = lines.slice(-3);
        expect(token).toMatch(/^TOKEN=[\w-]+\.[\w-]+\.[\w-]+$/);
        expect(session).toMatch(/^SESSION=\d+$/);
        expect(plugin).toMatch(/^PLUGIN=\d+$/);
        const pluginId = Number(plugin.slice('PLUGIN='.length));
        const target = expect.objectContaining({
          target_url: 'https://example.com/',
          host_name: 'example.com',
          port_number: 443,
        });
        expect(answers).toEqual([
          // 1. alice registers, confirms through the mailed link, logs in ($TOKEN above).
          okMessage('User created successfully'),
          okMessage('Email send successful'),
          okMessage('Email Verified'),
          // 2. The session created and activated, the target, the configuration.
          okData(null),
          okData(null),
          okData(target),
          okData([target]),
          okData({
            general: expect.arrayContaining([
              expect.objectContaining({ key: 'http_timeout', section: 'general' }),
            ]) as unknown,
          }),
          // 3. The upload ($PLUGIN above), waiting for review among alice's plugins.
          okData(
            expect.objectContaining({
              total: 1,
              plugins: [
                expect.objectContaining({
                  id: pluginId,
                  name: 'hello',
                  status: 'pending',
                  rejection_reason: null,
                }),
              ],
            }),
          ),
          // 4. The admin address: registered, confirmed, its password set by the mailed OTP.
          okMessage('User created successfully'),
          okMessage('Email send successful'),
          okMessage('Email Verified'),
          okMessage('Otp Send Successful'),
          okMessage('Password Change Successful'),
          // 5. The setting changed, the source read, the approval, the catalogue.
          okData(null),
          okData(expect.objectContaining({ id: pluginId, name: 'hello', source_code: SOURCE })),
          okData(
            expect.objectContaining({
              id: pluginId,
              name: 'hello',
              status: 'approved',
              user_id: 1,
              reviewed_by_user_id: 2,
            }),
          ),
          okData(
            expect.objectContaining({
              total: 1,
              plugins: [expect.objectContaining({ id: pluginId, name: 'hello', status: 'approved' })],
            }),
          ),
        ]);
        expect(run.code).toBe(0);
        // The block's last line, `kill %1`, stops the server (npm passes the signal on).
        expect(run.endedByItself).toBe(true);
      });
      expect(await refuses(port)).toBe(true);
    }, 240_000);

    it('stops and shows the end of the server log when the port is taken', async () => {
      // Another server holds the port and answers every request, /health/ready included, as
      // an earlier walkthrough's server would. The block as printed (its bound of 60 tries
      // kept) must neither run against that server nor wait for ever: its own server fails
      // to listen and exits, the wait stops, and the end of its log says why.
      const port = await freePort();
      const holder: Server = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      });
      await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
      try {
        const notice = 'No server of its own at';
        const run = await runBash(onPort(walkthroughBlock(), port), {
          limitMs: 120_000,
          settleMs: 5_000,
          watch: notice,
        });
        withServerLog(run, () => {
          const lines = run.stdout.split('\n');
          const at = lines.findIndex((line) => line.startsWith(notice));
          expect(lines[at]).toBe(`${notice} http://127.0.0.1:${port}/api/v1: see the log above.`);
          // The 20 lines of server.log just before it say why the server stopped (in its
          // buffered log, or its line on stderr, whichever came last).
          expect(lines.slice(Math.max(0, at - 20), at).join('\n')).toContain(
            `listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
          );
          // The 60 tries of about a second each bound the wait; the server stopped well before.
          expect(run.seenAfterMs).toBeLessThan(65_000);
        });
      } finally {
        await new Promise<void>((resolve) => holder.close(() => resolve()));
      }
    }, 150_000);
  });
});
