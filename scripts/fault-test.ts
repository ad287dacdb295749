/**
 * Fault test (not part of `npm test`): the production build as a child process on a MariaDB
 * server of the script's own (fresh data directory, free port; the shared server on 3306 is
 * never touched). Under a steady, bounded load the database is stopped (SIGTERM, an orderly
 * shutdown; then SIGKILL, a crash), left down for a while and started again on the same
 * data directory. Passes when:
 *   - while it is down, every request gets 503 {status: 'fail', message: 'Service unavailable'}
 *     within FAULT_QUICK_MS (authenticated routes too: 503, never 401), none hangs, and
 *     liveness stays 200 while readiness says 503;
 *   - requests caught in flight by the stop get their normal answer or that 503, never
 *     another 5xx and never no answer;
 *   - after the restart the same app process (no restart) serves every route again within
 *     FAULT_RECOVERY_LIMIT_MS, and everything after that succeeds;
 *   - every write answered 201 (before, during or after the fault) is in the database, and
 *     every plugin row of the run has its file on disk.
 *
 *   FAULT_MODES              default SIGTERM,SIGKILL,SIGSTOP (SIGSTOP: a frozen server, as behind a
 *                            network partition)
 *   FAULT_CONCURRENCY        default 16 connections
 *   FAULT_DOWN_MS            default 6000: how long the database stays down
 *   FAULT_QUICK_MS           default 2000: the bound on an answer while it is down (SIGTERM, SIGKILL)
 *   FAULT_QUERY_TIMEOUT_SECONDS  default 2: the app's DATABASE_QUERY_TIMEOUT_SECONDS; while the
 *                            server is frozen nothing refuses, so the bound on an answer is that
 *                            deadline plus a second
 *   FAULT_RECOVERY_LIMIT_MS  default 5000: from "database answers again" to "every route works"
 *   FAULT_LOG_LEVEL          the app's LOG_LEVEL, default error (its log tail is printed on failure)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { RunningApp, startApp } from './lib/app-process';
import { intFromEnv } from './lib/env';
import { isAborting, registerCleanup, runScript, sleep } from './lib/cleanup';
import { HttpClient } from './lib/http-client';
import { PrivateMariaDb } from './lib/mariadb-server';
import { histogram, latencyTable, ms, percentile, Sample, table } from './lib/stats';
import { printWriteReport, verifyWrites } from './lib/write-check';
import {
  AUTHENTICATED,
  LoadUser,
  newRunId,
  OPERATION_KINDS,
  Outcome,
  provisionUsers,
  Workload,
} from './lib/workload';

const DATABASE = 'svc_fault';
/**
 * SIGTERM: orderly shutdown; SIGKILL: crash; SIGSTOP: the server freezes (then SIGCONT), as
 * behind a network partition or in a paused container: connections are not refused, only
 * never answered.
 */
const MODES = ['SIGTERM', 'SIGKILL', 'SIGSTOP'] as const;
type Mode = (typeof MODES)[number];
/** The client gives up after this long and calls it a hang. */
const HANG_MS = 10_000;
/** Each connection sends at most one request per this many ms, so a fast-failing outage is not a flood. */
const PACE_MS = 40;
/** A hard bound on the whole run's requests, whatever the timings. */
const MAX_REQUESTS = 60_000;
const STEADY_MS = 3_000;
const AFTER_MS = 8_000;

const UNAVAILABLE = { status: 'fail', message: 'Service unavailable' };

/** The fail body, exactly; an account endpoint's also repeats itself under `data`. */
function isUnavailable(outcome: { status: number; body: unknown }): boolean {
  const body = outcome.body as Record<string, unknown> | null;
  if (outcome.status !== 503 || body === null || typeof body !== 'object') return false;
  const { data, ...rest } = body;
  return isDeepStrictEqual(rest, UNAVAILABLE) && (data === undefined || isDeepStrictEqual(data, UNAVAILABLE));
}

/** A probe of the health routes, beside the load. */
interface Probe extends Sample {
  startedAt: number;
  endedAt: number;
  body: unknown;
}

/** Connections that send the mixed requests in a loop until stopped (or the request cap is hit). */
class SteadyLoad {
  readonly outcomes: Outcome[] = [];
  readonly probes: Probe[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly workload: Workload,
    /** Its own sockets: probes queued behind hung requests would measure the client, not the app. */
    private readonly probeClient: HttpClient,
    users: LoadUser[],
    concurrency: number,
  ) {
    let turn = 0;
    const worker = async () => {
      while (this.running && !isAborting() && this.outcomes.length < MAX_REQUESTS) {
        const started = performance.now();
        const n = (turn += 1);
        // Every route in turn, and each user through all of them.
        const kind = OPERATION_KINDS[n % OPERATION_KINDS.length];
        const user = users[Math.floor(n / OPERATION_KINDS.length) % users.length];
        this.outcomes.push(await this.workload.perform(kind, user));
        const rest = PACE_MS - (performance.now() - started);
        if (rest > 0) await sleep(rest);
      }
    };
    // Liveness and readiness each in their own loop, so a slow one does not hold up the other.
    const prober = async (path: string) => {
      while (this.running && !isAborting()) {
        const startedAt = this.workload.now();
        const result = await this.probeClient.get(path, { timeoutMs: HANG_MS });
        this.probes.push({
          route: `GET ${path.replace('/api/v1', '')}`,
          status: result.status,
          ms: result.ms,
          body: result.body,
          startedAt,
          endedAt: this.workload.now(),
        });
        await sleep(250);
      }
    };
    this.done = Promise.all([
      ...Array.from({ length: concurrency }, () => worker()),
      prober('/api/v1/health'),
      prober('/api/v1/health/ready'),
    ]).then(() => undefined);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

interface Timeline {
  mode: Mode;
  killSent: number;
  dbExited: number;
  restartBegun: number;
  dbAnswers: number;
  phaseEnd: number;
}

interface ModeResult {
  timeline: Timeline;
  checks: Array<{ name: string; ok: boolean; detail: string }>;
}

function evaluate(
  timeline: Timeline,
  outcomes: Outcome[],
  probes: Probe[],
  quickMs: number,
  recoveryLimitMs: number,
): ModeResult {
  const { killSent, dbExited, restartBegun, dbAnswers, phaseEnd } = timeline;
  const inWindow = <T extends { startedAt: number; endedAt: number }>(items: T[], from: number, to: number) =>
    items.filter((item) => item.startedAt >= from && item.startedAt < to);
  const before = outcomes.filter((o) => o.startedAt < killSent && o.endedAt < killSent);
  const caught = outcomes.filter((o) => o.startedAt < dbExited && o.endedAt >= killSent);
  // Down: sent after the server was gone, answered before it was started again. The server
  // may take connections a little before the script's own probe sees it answer, so the
  // window closes at the restart, not at "answers".
  const down = outcomes.filter((o) => o.startedAt >= dbExited && o.endedAt <= restartBegun);
  const straddling = outcomes.filter(
    (o) => o.startedAt >= dbExited && o.startedAt < dbAnswers && o.endedAt > restartBegun,
  );
  const after = inWindow(outcomes, dbAnswers, phaseEnd);

  const checks: ModeResult['checks'] = [];
  const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });
  const describe = (items: Outcome[]) =>
    items
      .slice(0, 3)
      .map(
        (o) =>
          `${o.route} ${o.status} ${o.error ?? JSON.stringify(o.body)} (t ${o.startedAt.toFixed(0)}-${o.endedAt.toFixed(0)})`,
      )
      .join('; ');

  check(
    'load succeeded before the fault',
    before.length > 0 && before.every((o) => o.ok),
    `${before.length} requests, ${histogram(before.map((o) => o.status))}`,
  );

  const caughtBad = caught.filter((o) => !o.ok && !isUnavailable(o));
  check(
    'requests caught by the stop: normal answer or 503',
    caughtBad.length === 0,
    `${caught.length} requests, ${histogram(caught.map((o) => o.status))}${caughtBad.length ? `; bad: ${describe(caughtBad)}` : ''}`,
  );

  const downBad = down.filter((o) => !isUnavailable(o));
  check(
    'while down: every answer is 503 Service unavailable',
    down.length > 0 && downBad.length === 0,
    `${down.length} requests, ${histogram(down.map((o) => o.status))}${downBad.length ? `; bad: ${describe(downBad)}` : ''}`,
  );
  const downAuthenticated = down.filter((o) => AUTHENTICATED.has(o.kind));
  check(
    'while down: authenticated routes answer 503, not 401',
    downAuthenticated.length > 0 && downAuthenticated.every(isUnavailable),
    `${downAuthenticated.length} authenticated requests, ${histogram(downAuthenticated.map((o) => o.status))}`,
  );
  const downTimes = down.map((o) => o.ms);
  check(
    `while down: every answer within ${quickMs} ms (no hang)`,
    down.length > 0 && down.every((o) => o.ms <= quickMs && o.status !== 0),
    `p50 ${ms(percentile(downTimes, 50))} ms, p99 ${ms(percentile(downTimes, 99))} ms, max ${ms(downTimes.length ? Math.max(...downTimes) : NaN)} ms`,
  );
  // Requests the outage caught in flight, or that outlived it, must not have hung either.
  const overlapping = [...caught, ...straddling];
  const overlappingTimes = overlapping.map((o) => o.ms);
  const overlappingSlow = overlapping.filter((o) => o.ms > quickMs || o.status === 0);
  check(
    `requests caught by the stop or the restart: answered within ${quickMs} ms`,
    overlappingSlow.length === 0,
    `${overlapping.length} requests, max ${ms(overlappingTimes.length ? Math.max(...overlappingTimes) : NaN)} ms${overlappingSlow.length ? `; slow: ${overlappingSlow.map((o) => `${o.route} ${o.status} in ${o.ms.toFixed(0)} ms`).join(', ')}` : ''}`,
  );
  const kindsDown = new Set(down.map((o) => o.kind));
  check(
    'while down: every route was tried',
    OPERATION_KINDS.every((kind) => kindsDown.has(kind)),
    `${kindsDown.size} of ${OPERATION_KINDS.length} routes`,
  );
  const straddlingBad = straddling.filter((o) => !o.ok && !isUnavailable(o));
  check(
    'requests across the restart: normal answer or 503',
    straddlingBad.length === 0,
    `${straddling.length} requests${straddlingBad.length ? `; bad: ${describe(straddlingBad)}` : ''}`,
  );

  const probesDown = probes.filter((p) => p.startedAt >= dbExited && p.endedAt <= restartBegun);
  const liveDown = probesDown.filter((p) => p.route === 'GET /health');
  const readyDown = probesDown.filter((p) => p.route === 'GET /health/ready');
  check(
    'while down: liveness 200, readiness 503',
    liveDown.length > 0 &&
      readyDown.length > 0 &&
      liveDown.every((p) => p.status === 200) &&
      readyDown.every((p) => p.status === 503 && p.ms <= quickMs + 500),
    `liveness ${histogram(liveDown.map((p) => p.status))}; readiness ${histogram(readyDown.map((p) => p.status))}, max ${ms(Math.max(0, ...readyDown.map((p) => p.ms)))} ms`,
  );

  // Recovered: the end of the last failure among requests sent after the database came back.
  const failedAfter = after.filter((o) => !o.ok);
  const recoveredAt = failedAfter.length ? Math.max(...failedAfter.map((o) => o.endedAt)) : dbAnswers;
  const firstSuccess = after.find((o) => o.ok);
  const settled = after.filter((o) => o.startedAt > recoveredAt);
  const kindsSettled = new Set(settled.filter((o) => o.ok).map((o) => o.kind));
  check(
    `recovers by itself within ${recoveryLimitMs} ms of the database answering`,
    recoveredAt - dbAnswers <= recoveryLimitMs,
    `recovered ${(recoveredAt - dbAnswers).toFixed(0)} ms after; failures after restart: ${failedAfter.length} (${histogram(failedAfter.map((o) => o.status))})${failedAfter.length ? `; e.g. ${describe(failedAfter)}` : ''}`,
  );
  check(
    'after recovery: every route succeeds, nothing fails',
    settled.length > 0 &&
      settled.every((o) => o.ok) &&
      OPERATION_KINDS.every((kind) => kindsSettled.has(kind)),
    `${settled.length} requests, ${histogram(settled.map((o) => o.status))}, ${kindsSettled.size} routes`,
  );
  const readyAfter = probes.filter((p) => p.route === 'GET /health/ready' && p.startedAt > recoveredAt);
  check(
    'after recovery: readiness 200',
    readyAfter.length > 0 && readyAfter.every((p) => p.status === 200),
    histogram(readyAfter.map((p) => p.status)),
  );

  console.log('');
  console.log(`timeline (${timeline.mode}), ms since the run's start:`);
  const firstUnavailable = outcomes.find((o) => o.endedAt >= killSent && isUnavailable(o));
  const frozen = timeline.mode === 'SIGSTOP';
  const events: Array<[number, string]> = [
    [killSent, `${timeline.mode} sent to mariadbd`],
    [
      dbExited,
      frozen
        ? 'mariadbd frozen'
        : `mariadbd exited (${(dbExited - killSent).toFixed(0)} ms after the signal)`,
    ],
    [restartBegun, frozen ? 'SIGCONT sent to mariadbd' : 'mariadbd started again on the same data directory'],
    [dbAnswers, `mariadbd answers (${(dbAnswers - restartBegun).toFixed(0)} ms later)`],
    [phaseEnd, 'load stopped'],
  ];
  if (firstUnavailable)
    events.push([firstUnavailable.endedAt, `first 503 Service unavailable (${firstUnavailable.route})`]);
  if (firstSuccess)
    events.push([firstSuccess.endedAt, `first success after the restart (${firstSuccess.route})`]);
  events.push([recoveredAt, 'last failure ended: recovered from here on']);
  console.log(
    table(
      ['t ms', 'event'],
      events.sort((a, b) => a[0] - b[0]).map(([t, text]) => [t.toFixed(0), text]),
    ),
  );
  const phaseRows: Array<[string, Outcome[]]> = [
    ['before', before],
    ['caught by stop', caught],
    ['down', down],
    ['across restart', straddling],
    ['after restart', after],
  ];
  console.log('');
  console.log(
    table(
      ['phase', 'requests', 'statuses', 'p50 ms', 'p99 ms', 'max ms'],
      phaseRows.map(([name, items]) => {
        const times = items.map((o) => o.ms);
        return [
          name,
          String(items.length),
          histogram(items.map((o) => o.status)),
          ms(percentile(times, 50)),
          ms(percentile(times, 99)),
          ms(times.length ? Math.max(...times) : NaN),
        ];
      }),
    ),
  );
  console.log('');
  console.log('while down, per route:');
  console.log(latencyTable([...down, ...probesDown]));
  return { timeline, checks };
}

async function runMode(
  mode: Mode,
  db: PrivateMariaDb,
  app: RunningApp,
  workload: Workload,
  users: LoadUser[],
  settings: {
    concurrency: number;
    downMs: number;
    quickMs: number;
    recoveryLimitMs: number;
    queryTimeoutSeconds: number;
  },
  allOutcomes: Outcome[],
): Promise<ModeResult> {
  const probeClient = new HttpClient('127.0.0.1', app.port, 2, HANG_MS);
  const load = new SteadyLoad(workload, probeClient, users, settings.concurrency);
  await sleep(STEADY_MS);
  const killSent = workload.now();
  if (mode === 'SIGSTOP') db.freeze();
  else await db.stop(mode);
  const dbExited = workload.now();
  await sleep(settings.downMs);
  const restartBegun = workload.now();
  if (mode === 'SIGSTOP') await db.thaw();
  else await db.start();
  const dbAnswers = workload.now();
  await sleep(AFTER_MS);
  await load.stop();
  probeClient.close();
  const phaseEnd = workload.now();
  allOutcomes.push(...load.outcomes);
  if (app.hasExited()) throw new Error(`the app process exited during the fault:\n${app.logTail()}`);
  return evaluate(
    { mode, killSent, dbExited, restartBegun, dbAnswers, phaseEnd },
    load.outcomes,
    load.probes,
    // A frozen server refuses nothing: each query waits out its deadline, and then some.
    mode === 'SIGSTOP' ? settings.queryTimeoutSeconds * 1000 + 1000 : settings.quickMs,
    settings.recoveryLimitMs,
  );
}

async function main(): Promise<number> {
  const modes = (process.env.FAULT_MODES || 'SIGTERM,SIGKILL,SIGSTOP')
    .split(',')
    .map((mode) => mode.trim().toUpperCase());
  for (const mode of modes) {
    if (!(MODES as readonly string[]).includes(mode))
      throw new Error(`FAULT_MODES takes ${MODES.join(', ')}`);
  }
  const settings = {
    concurrency: intFromEnv('FAULT_CONCURRENCY', 16, 1, 200),
    downMs: intFromEnv('FAULT_DOWN_MS', 6_000, 1_000, 120_000),
    quickMs: intFromEnv('FAULT_QUICK_MS', 2_000, 100, 60_000),
    recoveryLimitMs: intFromEnv('FAULT_RECOVERY_LIMIT_MS', 5_000, 100, 120_000),
    queryTimeoutSeconds: intFromEnv('FAULT_QUERY_TIMEOUT_SECONDS', 2, 1, 60),
  };
  const work = mkdtempSync(join(tmpdir(), 'svc-fault-'));
  // Registered first, so it is released last: after the server and the app are gone.
  registerCleanup(
    'temporary directory',
    async () => rmSync(work, { recursive: true, force: true }),
    () => rmSync(work, { recursive: true, force: true }),
  );
  const runId = newRunId();
  console.log(
    `fault test ${runId}: modes ${modes.join(', ')}; ${settings.concurrency} connections, each at most one request per ${PACE_MS} ms`,
  );

  const initStarted = performance.now();
  const db = await PrivateMariaDb.create(join(work, 'mariadb'));
  await db.start();
  await db.query(undefined, `CREATE DATABASE IF NOT EXISTS ${DATABASE}`);
  console.log(
    `private MariaDB pid ${db.pid} on 127.0.0.1:${db.port}, fresh data directory under ${work} (${Math.round(performance.now() - initStarted)} ms)`,
  );
  const databaseUrl = db.url(DATABASE);
  const pluginDir = join(work, 'community-plugins');
  const app = await startApp({
    databaseUrl,
    pluginDir,
    logFile: join(work, 'app.log'),
    logLevel: process.env.FAULT_LOG_LEVEL || 'error',
    maxSockets: settings.concurrency,
    requestTimeoutMs: HANG_MS,
    env: { DATABASE_QUERY_TIMEOUT_SECONDS: String(settings.queryTimeoutSeconds) },
  });
  console.log(
    `app pid ${app.pid} (node dist/src/main.js, BCRYPT_COST=4, RATE_LIMIT=off) ready on 127.0.0.1:${app.port}`,
  );
  const users = await provisionUsers(app, runId, 8);
  console.log(`${users.length} users registered, activated and logged in`);

  const workload = new Workload(app.client, runId, performance.now(), HANG_MS);
  const allOutcomes: Outcome[] = [];
  const results: ModeResult[] = [];
  for (const mode of modes as Mode[]) {
    results.push(await runMode(mode, db, app, workload, users, settings, allOutcomes));
  }

  console.log('');
  console.log(`all requests (${allOutcomes.length}):`);
  console.log(latencyTable(allOutcomes));
  console.log('');
  console.log('writes, read back from the database after the last restart:');
  const writes = await verifyWrites(databaseUrl, runId, allOutcomes, pluginDir);
  printWriteReport(writes);

  const appPid = app.pid;
  const stopped = await app.stop();
  console.log(
    `app pid ${appPid} served the whole run; stopped by SIGTERM in ${stopped.ms.toFixed(0)} ms, exit ${stopped.code}`,
  );

  console.log('');
  const rows: string[][] = [];
  for (const result of results) {
    for (const { name, ok, detail } of result.checks)
      rows.push([result.timeline.mode, ok ? 'PASS' : 'FAIL', name, detail]);
  }
  rows.push([
    '-',
    writes.ok ? 'PASS' : 'FAIL',
    'no write answered 201 is lost; every plugin row has its file',
    `${writes.tables.map((t) => `${t.table} ${t.lost.length} of ${t.acknowledged} lost`).join(', ')}; ` +
      `plugin rows without file: ${writes.missingFiles.length}`,
  ]);
  rows.push([
    '-',
    stopped.code === 0 ? 'PASS' : 'FAIL',
    'the app never restarted and shuts down cleanly',
    `exit ${stopped.code}`,
  ]);
  // A commit whose acknowledgement died with the server: the row exists, the client heard 503.
  const ambiguous = writes.unacknowledgedRows;
  rows.push([
    '-',
    'INFO',
    'rows whose request was not answered 201 (commit outcome lost with the server)',
    ambiguous.length === 0
      ? 'none'
      : ambiguous
          .map(
            (row) =>
              `${row.table} answer ${row.answer}${row.fileOnDisk === false ? ' (file NOT on disk)' : ''}`,
          )
          .join('; '),
  ]);
  console.log(table(['mode', 'result', 'check', 'figures'], rows));
  const failed = rows.filter((row) => row[1] === 'FAIL');
  console.log('');
  if (failed.length > 0) {
    console.log(`FAIL: ${failed.length} check(s) failed`);
    console.log(`app log tail:\n${app.logTail(20)}`);
    return 1;
  }
  console.log('PASS');
  return 0;
}

runScript(main);
