/**
 * `npm run bench:connections`: what stalled clients cost the server, and for how long. The
 * built entrypoint (dist/src/main.js, as `npm start` runs it) is started on loopback with
 * SQLite, then N connections from 127.0.0.1 each send a login's headers and part of its
 * body, and stall. Prints the server's RSS before, while they are held, and after the server
 * has closed them all, with the time that took; and the answer to a request from another
 * address (127.0.0.2) meanwhile.
 *
 * Scenarios: the per-address cap off (HTTP_CONNECTIONS_PER_ADDRESS=0), to show what one held
 * connection costs, at 1,000 and 6,000 connections; and the default cap (256) at 6,000, to show
 * the bound one address meets. The other limits are the defaults (a body must arrive within
 * HTTP_REQUEST_TIMEOUT_SECONDS, 60 s), so each scenario takes a little over a minute.
 *
 * Environment (optional): BENCH_STALLED a comma-separated list of connection counts (default
 * 1000,6000). Each connection is a file descriptor in this process and in the server: the
 * soft `ulimit -n` must exceed the largest count (it is checked first).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, getJson, stopProcess, waitUntilReady } from '../test/helpers/api-process';
import {
  closedWithin,
  LIVENESS_REQUEST,
  openRawConnection,
  type RawConnection,
} from '../test/helpers/raw-connections';
import { TEST_JWT_SECRET } from '../test/helpers/test-app';

const ROOT = join(__dirname, '..');
const DEFAULT_CAP = 256;
/** Connections opened at once: more would overflow the listen backlog (511) into SYN retries. */
const OPENING_BATCH = 200;
/** After the last connection is open, for the server to have read every one's bytes. */
const SETTLE_MS = 2000;
/** Far past the 60 s request limit: a scenario that is not released by then is reported as such. */
const RELEASE_BOUND_MS = 120_000;

const BODY = JSON.stringify({ emailOrUsername: 'nobody', password: 'Str0ng!Passw0rd' });
const STALLED_LOGIN =
  'POST /api/v1/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
  `Content-Length: ${BODY.length}\r\n\r\n${BODY.slice(0, 12)}`;

interface Scenario {
  connections: number;
  cap: number;
}

interface Figures extends Scenario {
  held: number;
  rssBeforeMb: number;
  rssHeldMb: number;
  rssAfterMb: number;
  /** Meaningful with the cap off, where nothing is refused. */
  perConnectionKb: number | null;
  /** The longest any connection stayed open, from its opening to its close by the server. */
  heldAtMostS: number | null;
  requestMeanwhile: string;
}

const progress = (text: string) => process.stderr.write(`[bench:connections] ${text}\n`);

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  if (!line) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line[1]) / 1024;
}

function softFileLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8').match(/^Max open files\s+(\d+|unlimited)/m);
  return !line || line[1] === 'unlimited' ? Infinity : Number(line[1]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startServer(cap: number): Promise<{ child: ChildProcess; port: number; dir: string }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-connections-'));
  const child = spawn(process.execPath, [join(ROOT, 'dist/src/main.js')], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      JWT_SECRET: TEST_JWT_SECRET,
      LOG_LEVEL: 'silent',
      HTTP_CONNECTIONS_PER_ADDRESS: String(cap),
    },
    stdio: 'ignore',
  });
  await waitUntilReady(port, child);
  return { child, port, dir };
}

/** GET /api/v1/health from another client address (127.0.0.2): its status line and time. */
async function requestFromElsewhere(port: number): Promise<string> {
  const started = performance.now();
  const connection = await openRawConnection(port, {
    localAddress: '127.0.0.2',
    send: LIVENESS_REQUEST.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'),
  });
  const raw = await closedWithin(connection, RELEASE_BOUND_MS, 'the request meanwhile');
  const status = raw === '' ? 'closed unanswered' : raw.slice(9, 12);
  return `${status} in ${Math.round(performance.now() - started)} ms`;
}

async function measure(scenario: Scenario): Promise<Figures> {
  const { child, port, dir } = await startServer(scenario.cap);
  const connections: RawConnection[] = [];
  try {
    // Warm: the routes, the parsers and the database connection are in memory before the baseline.
    for (let i = 0; i < 50; i += 1) await getJson(port, '/api/v1/health');
    await sleep(SETTLE_MS);
    const rssBeforeMb = rssMb(child.pid!);
    const heldFor: Array<Promise<number>> = [];
    for (let opened = 0; opened < scenario.connections; opened += OPENING_BATCH) {
      const batch = Math.min(OPENING_BATCH, scenario.connections - opened);
      const openedAt = performance.now();
      const opening = await Promise.all(
        Array.from({ length: batch }, () => openRawConnection(port, { send: STALLED_LOGIN })),
      );
      connections.push(...opening);
      heldFor.push(
        ...opening.map((connection) => connection.closed.then(() => performance.now() - openedAt)),
      );
    }
    await sleep(SETTLE_MS);
    const rssHeldMb = rssMb(child.pid!);
    const held = connections.filter((connection) => !connection.isClosed()).length;
    const meanwhile = await requestFromElsewhere(port);
    const heldAtMostMs = await Promise.race([
      Promise.all(heldFor).then((times) => Math.max(...times)),
      sleep(RELEASE_BOUND_MS).then(() => null),
    ]);
    await sleep(SETTLE_MS);
    const rssAfterMb = rssMb(child.pid!);
    return {
      ...scenario,
      held,
      rssBeforeMb,
      rssHeldMb,
      rssAfterMb,
      perConnectionKb: scenario.cap === 0 ? ((rssHeldMb - rssBeforeMb) * 1024) / held : null,
      heldAtMostS: heldAtMostMs === null ? null : heldAtMostMs / 1000,
      requestMeanwhile: meanwhile,
    };
  } finally {
    for (const connection of connections) connection.socket.destroy();
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

function table(rows: Figures[]): string {
  const header =
    '| connections | HTTP_CONNECTIONS_PER_ADDRESS | held | RSS before | RSS held | per connection | held at most | RSS after | a request from 127.0.0.2 meanwhile |';
  const rule = '|---:|---:|---:|---:|---:|---:|---:|---:|---|';
  const lines = rows.map((row) =>
    [
      row.connections,
      row.cap === 0 ? '0 (off)' : row.cap,
      row.held,
      `${row.rssBeforeMb.toFixed(0)} MB`,
      `${row.rssHeldMb.toFixed(0)} MB`,
      row.perConnectionKb === null ? '-' : `${row.perConnectionKb.toFixed(0)} KB`,
      row.heldAtMostS === null ? `over ${RELEASE_BOUND_MS / 1000} s` : `${row.heldAtMostS.toFixed(1)} s`,
      `${row.rssAfterMb.toFixed(0)} MB`,
      row.requestMeanwhile,
    ].join(' | '),
  );
  return [header, rule, ...lines.map((line) => `| ${line} |`)].join('\n');
}

async function main(): Promise<void> {
  const counts = (process.env.BENCH_STALLED ?? '1000,6000').split(',').map((count) => Number(count.trim()));
  if (counts.some((count) => !Number.isInteger(count) || count < 1)) {
    throw new Error('BENCH_STALLED must be a comma-separated list of positive integers');
  }
  const largest = Math.max(...counts);
  const limit = softFileLimit();
  if (largest + 100 > limit) {
    throw new Error(`ulimit -n is ${limit}: raise it above ${largest + 100} (ulimit -n ${largest + 1000})`);
  }
  const scenarios: Scenario[] = [
    ...counts.map((connections) => ({ connections, cap: 0 })),
    { connections: largest, cap: DEFAULT_CAP },
  ];
  const rows: Figures[] = [];
  for (const scenario of scenarios) {
    progress(`${scenario.connections} stalled connections, cap ${scenario.cap}`);
    rows.push(await measure(scenario));
  }
  process.stdout.write(
    `Stalled login bodies from 127.0.0.1 (Node ${process.version}, default time limits):\n\n${table(rows)}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
