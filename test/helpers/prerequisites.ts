/**
 * What some tests need from outside npm: Debian's chromium (the page tests), bubblewrap and
 * strace (the test-run jail), a Redis server
 * (the shared rate limits), and mount (the storage faults, as root). `npm test` first runs
 * prepare() (its pretest), which installs chromium (unless SVC_TEST_NO_APT=1) where the machine
 * allows; a test that still lacks something is skipped with one line naming it and
 * its remedy, or fails when SVC_TEST_REQUIRE_ALL=1 (CI sets it, so CI runs them all).
 *
 * Where they are looked for is settable: SVC_TEST_CHROMIUM (a path; default chromium or
 * chromium-browser on PATH) and SVC_TEST_REDIS_URL (default: a redis-server the run starts on a
 * free loopback port, test/private-redis.js; given, its database is emptied by the tests that
 * use it, and no other database is touched).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

const REQUIRE_ALL = process.env.SVC_TEST_REQUIRE_ALL === '1';

/** What is missing, and the command that installs or starts it. */
export interface Lack {
  missing: string;
  remedy: string;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && executable(join(dir, name))) return join(dir, name);
  }
  return null;
}

/** The chromium the page tests drive, or null. */
export function chromiumPath(): string | null {
  const configured = process.env.SVC_TEST_CHROMIUM;
  if (configured) return executable(configured) ? configured : null;
  return onPath('chromium') ?? onPath('chromium-browser');
}

/**
 * The suite's own Redis database: SVC_TEST_REDIS_URL as given, or as Jest's global setup set it
 * to the run's private server. Empty when there is neither (redisLack says why).
 */
export function testRedisUrl(): string {
  return process.env.SVC_TEST_REDIS_URL ?? '';
}

const redisPort = (url: URL) => Number(url.port) || 6379;

/**
 * True when a Redis server answers PING at the URL. Synchronous (a child process bounded at
 * 2 s), so a test file decides at load time which tests it declares.
 */
export function redisAnswers(url = testRedisUrl()): boolean {
  const parsed = new URL(url);
  const probe = `
    const socket = require('node:net').connect(${redisPort(parsed)}, ${JSON.stringify(parsed.hostname)});
    socket.setTimeout(1500, () => process.exit(1));
    socket.on('error', () => process.exit(1));
    socket.on('connect', () => socket.write('PING\\r\\n'));
    socket.on('data', (data) => process.exit(String(data).startsWith('+PONG') ? 0 : 1));
  `;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 2000, stdio: 'ignore' }).status === 0;
}

export function chromiumLack(): Lack | null {
  if (chromiumPath() !== null) return null;
  const configured = process.env.SVC_TEST_CHROMIUM;
  return {
    missing: configured ? `chromium at ${configured}` : 'chromium on PATH',
    remedy: 'apt-get install -y --no-install-recommends chromium (or set SVC_TEST_CHROMIUM)',
  };
}

/** Debian's bubblewrap: the reviewers' test-run jail (src/plugin-jail). */
export function bwrapPath(): string {
  return process.env.SVC_TEST_BWRAP || '/usr/bin/bwrap';
}

/** Debian's strace: the tracer around the jail, whose view is the report's facts. */
export const STRACE_PATH = '/usr/bin/strace';

/** What the jail needs: bubblewrap, and strace around it. */
export function bwrapLack(): Lack | null {
  if (!executable(bwrapPath())) {
    return {
      missing: `bubblewrap at ${bwrapPath()}`,
      remedy: 'apt-get install -y --no-install-recommends bubblewrap (or set SVC_TEST_BWRAP)',
    };
  }
  if (!executable(STRACE_PATH)) {
    return {
      missing: `strace at ${STRACE_PATH}`,
      remedy: 'apt-get install -y --no-install-recommends strace',
    };
  }
  return null;
}

/** The uploads over a real socket are sent as users send them, with curl. */
export function curlLack(): Lack | null {
  if (onPath('curl') !== null) return null;
  return { missing: 'curl on PATH', remedy: 'apt-get install -y --no-install-recommends curl' };
}

export function redisLack(): Lack | null {
  const url = testRedisUrl();
  if (url === '') {
    return {
      missing: 'redis-server on PATH (the run starts one of its own on a free port)',
      remedy: 'apt-get install -y --no-install-recommends redis-server (or set SVC_TEST_REDIS_URL)',
    };
  }
  if (redisAnswers(url)) return null;
  const parsed = new URL(url);
  return {
    missing: `Redis at ${parsed.hostname}:${redisPort(parsed)}`,
    remedy:
      `redis-server --daemonize yes --bind 127.0.0.1 --port ${redisPort(parsed)} --save "" --appendonly no` +
      ' (or set SVC_TEST_REDIS_URL)',
  };
}

/**
 * `describe` when nothing is lacking. Otherwise one line on stderr and the block skipped, or,
 * with SVC_TEST_REQUIRE_ALL=1, one failing test saying the same.
 */
export function describeNeeding(lack: Lack | null, name: string, body: () => void): void {
  // Jest's globals under other names: this helper declares blocks for the spec that calls it.
  const block = describe;
  const test = it;
  if (lack === null) {
    block(name, body);
    return;
  }
  const line = `${name}: needs ${lack.missing}; ${lack.remedy}`;
  if (REQUIRE_ALL) {
    block(name, () => {
      test(`needs ${lack.missing}`, () => {
        throw new Error(`${line} (SVC_TEST_REQUIRE_ALL=1 turns this skip into a failure)`);
      });
    });
    return;
  }
  process.stderr.write(`SKIPPED ${line}\n`);
  block.skip(name, body);
}

/** The lock on the run's Redis database: a directory (mkdir is atomic) holding the holder's pid. */
const REDIS_LOCK = join(process.env.SVC_TEST_RUN_DIR ?? tmpdir(), 'svc-test-redis.lock');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function lockTestRedis(): Promise<void> {
  for (;;) {
    try {
      mkdirSync(REDIS_LOCK);
      writeFileSync(join(REDIS_LOCK, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder: number | null = null;
    try {
      holder = Number(readFileSync(join(REDIS_LOCK, 'pid'), 'utf8'));
    } catch {
      // Just made, its pid not written yet.
    }
    // A worker that died holding it (killed, crashed) does not stop the run.
    if (holder !== null && holder !== process.pid && !alive(holder)) {
      rmSync(REDIS_LOCK, { recursive: true, force: true });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * `describeNeeding(redisLack(), ...)` for a block on the suite's one Redis database, which it
 * empties: Jest's workers run spec files side by side, so such blocks take turns, each holding
 * a lock of this run from before its own hooks until after them (Jest runs a block's beforeAll
 * hooks, and its afterAll hooks, in the order they were declared).
 */
export function describeWithTestRedis(name: string, body: () => void): void {
  describeNeeding(redisLack(), name, () => {
    // Another block may hold it for the minutes two API processes take to start and finish.
    beforeAll(lockTestRedis, 15 * 60_000);
    body();
    afterAll(() => rmSync(REDIS_LOCK, { recursive: true, force: true }));
  });
}

/** As root, with apt-get, unless SVC_TEST_NO_APT=1. */
const aptAllowed = (): boolean =>
  process.env.SVC_TEST_NO_APT !== '1' && process.getuid?.() === 0 && onPath('apt-get') !== null;

function aptInstall(name: string): void {
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update'], { stdio: 'ignore', env });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', name], { stdio: 'ignore', env });
  } catch (error) {
    process.stdout.write(`pretest: could not install ${name} (${(error as Error).message.split('\n')[0]})\n`);
  }
}

/**
 * npm's pretest: installs chromium, bubblewrap and strace (as root, with apt-get; not with
 * SVC_TEST_NO_APT=1), when missing. Redis is the run's own (Jest's global setup).
 */
export function prepare(): void {
  if (chromiumLack() !== null && !process.env.SVC_TEST_CHROMIUM && aptAllowed()) {
    // A system-wide install of this size is said before it starts, with the way around it.
    process.stdout.write(
      'pretest: installing Debian’s chromium with apt-get (about 120 MB to download, 400 MB on disk) ' +
        'for the page tests in a browser; to skip it, set SVC_TEST_CHROMIUM to a chromium you have, ' +
        'or SVC_TEST_NO_APT=1 to skip those tests\n',
    );
    aptInstall('chromium');
  }
  if (!executable(bwrapPath()) && !process.env.SVC_TEST_BWRAP && aptAllowed()) {
    process.stdout.write(
      'pretest: installing Debian’s bubblewrap with apt-get (under 100 kB) for the test-run jail\n',
    );
    aptInstall('bubblewrap');
  }
  if (!executable(STRACE_PATH) && aptAllowed()) {
    process.stdout.write(
      'pretest: installing Debian’s strace with apt-get (about 1.5 MB) for the test-run jail\n',
    );
    aptInstall('strace');
  }
}

if (require.main === module) prepare();
