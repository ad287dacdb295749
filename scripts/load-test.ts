/**
 * Load test (not part of `npm test`): the production build as a child process on MariaDB,
 * N mixed requests (default 2,000) at C concurrent connections (default 50). Passes when no
 * request gets a 5xx or no answer, every request gets the answer its route promises, and
 * no write is lost: every session, target and upload answered 201 has its row (and every
 * upload its file) when the database is read directly afterwards.
 *
 *   LOAD_DATABASE_URL  default mysql://root@127.0.0.1:3306/loadtest (created if missing; rows
 *                      of earlier runs are left alone, each run's names are unique)
 *   LOAD_REQUESTS      default 2000
 *   LOAD_CONCURRENCY   default 50
 *   LOAD_USERS         default 25 (so two connections share each user, as a person's tabs would)
 *   LOAD_SEED          default 1 (the order of the mix)
 *   LOAD_LOG_LEVEL     the app's LOG_LEVEL, default silent (its log tail is printed on failure)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp } from './lib/app-process';
import { intFromEnv } from './lib/env';
import { isAborting, registerCleanup, runScript } from './lib/cleanup';
import { histogram, latencyTable, ms, percentile } from './lib/stats';
import { ensureDatabase, printWriteReport, verifyWrites } from './lib/write-check';
import { newRunId, OperationKind, Outcome, provisionUsers, shuffled, Workload } from './lib/workload';

/** Shares of the mix, in percent: reads and writes of every resource, and logins. */
const MIX: Record<OperationKind, number> = {
  login: 8,
  'session-create': 16,
  'session-list': 14,
  'target-create': 12,
  'plugin-upload': 12,
  catalogue: 14,
  configuration: 10,
  'plugins-mine': 14,
};

/** Exactly `total` operations in the MIX proportions (largest remainders get the rounding). */
function plan(total: number, seed: number): OperationKind[] {
  const kinds = Object.keys(MIX) as OperationKind[];
  const weight = kinds.reduce((sum, kind) => sum + MIX[kind], 0);
  const exact = kinds.map((kind) => (MIX[kind] * total) / weight);
  const counts = exact.map(Math.floor);
  const order = exact.map((value, index) => [value - Math.floor(value), index]).sort((a, b) => b[0] - a[0]);
  for (let i = 0; i < total - counts.reduce((a, b) => a + b, 0); i += 1) counts[order[i][1]] += 1;
  return shuffled(
    kinds.flatMap((kind, index) => Array<OperationKind>(counts[index]).fill(kind)),
    seed,
  );
}

async function main(): Promise<number> {
  const databaseUrl = process.env.LOAD_DATABASE_URL || 'mysql://root@127.0.0.1:3306/loadtest';
  const total = intFromEnv('LOAD_REQUESTS', 2000, 1, 1_000_000);
  const concurrency = intFromEnv('LOAD_CONCURRENCY', 50, 1, 1000);
  const userCount = intFromEnv('LOAD_USERS', 25, 1, 10_000);
  const seed = intFromEnv('LOAD_SEED', 1, 0, 2 ** 31);
  const runId = newRunId();
  const work = mkdtempSync(join(tmpdir(), 'svc-load-'));
  registerCleanup(
    'temporary directory',
    async () => rmSync(work, { recursive: true, force: true }),
    () => rmSync(work, { recursive: true, force: true }),
  );
  const pluginDir = join(work, 'community-plugins');

  console.log(`load test ${runId}: ${total} requests, ${concurrency} connections, ${userCount} users`);
  console.log(
    `database ${databaseUrl.replace(/:[^:@/]*@/, ':***@')}; app: node dist/src/main.js (BCRYPT_COST=4,`,
  );
  console.log(
    `  RATE_LIMIT=off, LOG_LEVEL=${process.env.LOAD_LOG_LEVEL || 'silent'}; bcrypt cost is lowered because hashing is not what is tested)`,
  );
  await ensureDatabase(databaseUrl);
  const app = await startApp({
    databaseUrl,
    pluginDir,
    logFile: join(work, 'app.log'),
    logLevel: process.env.LOAD_LOG_LEVEL || 'silent',
    maxSockets: concurrency,
    requestTimeoutMs: 30_000,
  });
  console.log(`app pid ${app.pid} ready on 127.0.0.1:${app.port}`);

  const setupStarted = performance.now();
  const users = await provisionUsers(app, runId, userCount);
  console.log(
    `${users.length} users registered, activated by their mailed link and logged in (${Math.round(performance.now() - setupStarted)} ms)`,
  );

  const operations = plan(total, seed);
  const workload = new Workload(app.client, runId, performance.now(), 30_000);
  const outcomes: Outcome[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < operations.length && !isAborting()) {
        const index = next;
        next += 1;
        outcomes.push(await workload.perform(operations[index], users[index % users.length]));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;

  console.log('');
  console.log(latencyTable(outcomes));
  const times = outcomes.map((outcome) => outcome.ms);
  console.log('');
  console.log(
    `${outcomes.length} requests in ${seconds.toFixed(2)} s = ${(outcomes.length / seconds).toFixed(0)} req/s; ` +
      `p50 ${ms(percentile(times, 50))} ms, p99 ${ms(percentile(times, 99))} ms; statuses ${histogram(outcomes.map((o) => o.status))}`,
  );

  const serverErrors = outcomes.filter((outcome) => outcome.status >= 500);
  const noAnswer = outcomes.filter((outcome) => outcome.status === 0);
  const unexpected = outcomes.filter((outcome) => !outcome.ok && outcome.status > 0 && outcome.status < 500);
  console.log(
    `5xx: ${serverErrors.length}; no answer (timeout/reset): ${noAnswer.length}; other unexpected: ${unexpected.length}`,
  );
  for (const outcome of [...serverErrors, ...noAnswer, ...unexpected].slice(0, 10)) {
    console.log(`  ${outcome.route} -> ${outcome.status} ${outcome.error ?? JSON.stringify(outcome.body)}`);
  }

  console.log('');
  console.log('writes, read back from the database:');
  const writes = await verifyWrites(databaseUrl, runId, outcomes, pluginDir);
  printWriteReport(writes);

  const stopped = await app.stop();
  console.log(`app stopped by SIGTERM in ${stopped.ms.toFixed(0)} ms, exit ${stopped.code}`);

  const failures: string[] = [];
  if (serverErrors.length > 0) failures.push(`${serverErrors.length} responses with 5xx`);
  if (noAnswer.length > 0) failures.push(`${noAnswer.length} requests without an answer`);
  if (unexpected.length > 0) failures.push(`${unexpected.length} unexpected answers`);
  if (!writes.ok) failures.push('lost, duplicated or inconsistent writes');
  // Without a fault nothing excuses a row whose request failed.
  if (writes.unacknowledgedRows.length > 0)
    failures.push(`${writes.unacknowledgedRows.length} rows without a 201`);
  if (outcomes.length !== total) failures.push(`${outcomes.length} of ${total} requests ran`);
  console.log('');
  if (failures.length > 0) {
    console.log(`FAIL: ${failures.join('; ')}`);
    console.log(`app log tail:\n${app.logTail()}`);
    return 1;
  }
  console.log('PASS: zero 5xx, zero lost writes');
  return 0;
}

runScript(main);
