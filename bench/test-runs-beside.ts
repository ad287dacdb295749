/**
 * Other users' requests while test-runs run (issue 31): GET /api/v1/sessions/ as a reader, idle
 * and then while an admin keeps every test-run slot busy with a plugin that spins until its CPU
 * limit (the worst a test-run does to the machine: one core each, one run per core). Prints the
 * two rows (requests/s, p50, p99, failures) and how many runs were started; writes nothing into
 * the repository.
 *
 *   node --require ./test/helpers/ts-register.js bench/test-runs-beside.ts
 *
 * Environment (all optional): BENCH_DATABASE_URL (a MySQL/MariaDB database of its own, EMPTIED
 * first; SQLite in a temporary directory without it), BENCH_DURATION (seconds per measured run,
 * default 6), BENCH_CONNECTIONS (10), PLUGIN_TEST_RUN_BWRAP. Needs a working jail (see
 * docs/plugin-test-run.md): it stops at the first answer saying test-runs are unavailable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { emptyDatabase } from '../test/helpers/database';
import { benchConfig, startApp } from './app-server';
import { addUsage, NO_USAGE, runLoad, summarize, type Usage } from './load';
import type { RawLoad } from './load-spec';
import type { LoadResult, LoadSpec } from './load-spec';
import { table } from './report';
import { seed } from './seed';

const SESSIONS_PER_USER = 10;
/** Alternating idle / beside rounds, pooled: neither figure is the one measured on a cold JIT. */
const ROUNDS = 2;
const CPU_SECONDS = 2;
/** Passes the validator, and spins until its CPU limit ends it. */
const SPINNER =
  'DESCRIPTION = "Counts forever"\n\n\ndef run(PluginInfo):\n    count = 0\n    while True:\n        count += 1\n';

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1) throw new Error(`${name} must be a positive integer`);
  return Number(raw);
}

const progress = (line: string) => process.stderr.write(`${line}\n`);

async function uploadSpinner(origin: string, token: string): Promise<{ id: number; version: string }> {
  const form = new FormData();
  form.set('name', 'bench-spinner');
  form.set('description', 'Benchmark test-run load: spins until its CPU limit ends it, one core each run.');
  form.set('group', 'web');
  form.set('type', 'passive');
  form.set('author', 'svc-bench');
  form.set('plugin_file', new Blob([SPINNER], { type: 'text/x-python' }), 'bench_spinner.py');
  const response = await fetch(`${origin}/api/v1/community-plugins/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`upload answered ${response.status}: ${text.slice(0, 300)}`);
  const data = (JSON.parse(text) as { data: { id: number; version?: string } }).data;
  return { id: data.id, version: data.version ?? '1.0.0' };
}

/**
 * Keeps the test-run slots full until stopped: posts a run, and on a full queue (503 with
 * Retry-After) asks again a moment later. Resolves with the number of runs admitted.
 */
function keepTestRunsBusy(origin: string, token: string, path: string, stop: AbortSignal): Promise<number> {
  return (async () => {
    let started = 0;
    while (!stop.aborted) {
      const response = await fetch(origin + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      const text = await response.text();
      if (response.status === 202) {
        started += 1;
        continue;
      }
      if (response.status !== 503 || !text.includes('queue is full')) {
        throw new Error(`test-run answered ${response.status}: ${text.slice(0, 300)}`);
      }
      await sleep(100);
    }
    return started;
  })();
}

async function main(): Promise<void> {
  const duration = positiveInteger('BENCH_DURATION', 6);
  const connections = positiveInteger('BENCH_CONNECTIONS', 10);
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  if (databaseUrl) await emptyDatabase(databaseUrl);
  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-test-runs-'));
  const config = benchConfig(workDir, databaseUrl, {
    BCRYPT_COST: '4',
    PLUGIN_TEST_RUN_CPU_SECONDS: String(CPU_SECONDS),
    PLUGIN_TEST_RUN_WALL_SECONDS: String(CPU_SECONDS * 5),
    // Only the runs that have a core: the keeper refills a slot as soon as one ends.
    PLUGIN_TEST_RUN_QUEUE: '0',
    ...(process.env.PLUGIN_TEST_RUN_BWRAP
      ? { PLUGIN_TEST_RUN_BWRAP: process.env.PLUGIN_TEST_RUN_BWRAP }
      : {}),
  });
  progress('starting the app');
  const app = await startApp(config);
  try {
    await app.ready;
    progress(`seeding: 3 users, ${SESSIONS_PER_USER} sessions each, the spinner plugin`);
    const seeded = await seed(app.origin, app.dataSource, {
      sessions: SESSIONS_PER_USER,
      approvedPlugins: 0,
      bcryptCost: 4,
    });
    const spinner = await uploadSpinner(app.origin, seeded.reader.token);
    const testRunPath = `/api/v1/community-plugins/${spinner.id}/versions/${spinner.version}/test-run/`;
    const spec = (title: string): LoadSpec => ({
      title,
      origin: app.origin,
      method: 'GET',
      path: '/api/v1/sessions/',
      headers: { authorization: `Bearer ${seeded.reader.token}` },
      connections,
      duration,
      expectStatus: 200,
      expectBodyIncludes: '"status":"success"',
    });
    const pooled = { idle: [] as RawLoad[], beside: [] as RawLoad[] };
    const usage: { idle: Usage; beside: Usage } = { idle: NO_USAGE, beside: NO_USAGE };
    const measure = async (which: 'idle' | 'beside', title: string): Promise<void> => {
      const run = await runLoad({ warmup: 2, specs: [spec(title)] });
      pooled[which].push(...run.runs);
      usage[which] = addUsage(usage[which], run);
    };

    let started = 0;
    for (let round = 1; round <= ROUNDS; round += 1) {
      progress(`round ${round}/${ROUNDS}: GET /api/v1/sessions/ idle`);
      await measure('idle', 'GET /api/v1/sessions/, idle');
      progress(
        `round ${round}/${ROUNDS}: GET /api/v1/sessions/ while ${availableParallelism()} test-runs spin (one per core)`,
      );
      const stop = new AbortController();
      const keeper = keepTestRunsBusy(app.origin, seeded.admin.token, testRunPath, stop.signal);
      // The load starts once the first runs are admitted (a failed keeper ends the bench).
      await Promise.race([sleep(500), keeper]);
      await measure('beside', 'GET /api/v1/sessions/ + test-runs on every core');
      stop.abort();
      started += await keeper;
      // The next idle round starts with no run left.
      for (;;) {
        const [{ left }] = (await app.dataSource.query(
          "SELECT COUNT(*) AS \"left\" FROM plugin_test_runs WHERE status IN ('queued', 'running')",
        )) as Array<{ left: number | string }>;
        if (Number(left) === 0) break;
        await sleep(200);
      }
    }
    const idle = summarize(pooled.idle, usage.idle, false);
    const beside = summarize(pooled.beside, usage.beside, false);
    const [{ timedOut }] = (await app.dataSource.query(
      'SELECT COUNT(*) AS "timedOut" FROM plugin_test_runs WHERE status = \'timed-out\'',
    )) as Array<{ timedOut: number | string }>;

    const row = (result: LoadResult) => [
      result.title,
      result.requestsPerSecond.toFixed(0),
      result.p50.toFixed(1),
      result.p99.toFixed(1),
      String(result.failures),
    ];
    console.log(
      `\nOther users' GET while test-runs run — ${databaseUrl ? 'MySQL/MariaDB' : 'SQLite'}, ` +
        `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} cores, ` +
        `${connections} connections, ${ROUNDS} rounds of ${duration} s each`,
    );
    console.log(table(['load', 'req/s', 'p50 ms', 'p99 ms', 'failures'], [row(idle), row(beside)]));
    console.log(
      `p99 beside / idle: ${(beside.p99 / idle.p99).toFixed(2)}; test-runs started: ${started} ` +
        `(${String(timedOut)} timed-out at their ${CPU_SECONDS} s CPU limit)`,
    );
    if (idle.failures > 0 || beside.failures > 0) process.exitCode = 1;
  } finally {
    await app.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
