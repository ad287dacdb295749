/**
 * Other users' requests while test-runs run (issues 31 and 41), a part of `npm run bench`
 * (`--only test-runs` alone): GET /api/v1/sessions/ as a reader, idle and then while an admin
 * keeps IN_FLIGHT test-runs admitted (one running per core, the rest queued) of a plugin that
 * spins until its CPU limit, the worst a test-run does to the machine, traced as every run is.
 * The runs have the default priority (PLUGIN_TEST_RUN_CPU_PRIORITY=idle). Needs a working jail
 * (docs/plugin-test-run.md): it stops at the first answer saying test-runs are unavailable.
 */
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppConfig } from '../src/config/app-config';
import { startApp } from './app-server';
import { addUsage, NO_USAGE, runLoad, summarize, type Usage } from './load';
import type { LoadResult, LoadSpec, RawLoad } from './load-spec';
import { table } from './report';
import { seed } from './seed';

const SESSIONS_PER_USER = 10;
/** Alternating idle / beside rounds, pooled: neither figure is the one measured on a cold JIT. */
const ROUNDS = 2;
export const TEST_RUN_CPU_SECONDS = 2;
/** Test-runs admitted at once: issue 41's four. */
export const IN_FLIGHT = 4;
/** Passes the validator, and spins until its CPU limit ends it. */
const SPINNER =
  'DESCRIPTION = "Counts forever"\n\n\ndef run(PluginInfo):\n    count = 0\n    while True:\n        count += 1\n';

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

export interface TestRunsBesideReport {
  idle: LoadResult;
  beside: LoadResult;
  started: number;
  timedOut: number;
}

/** The settings the app is started with for this part: runs that end at their CPU limit, IN_FLIGHT admitted. */
export function testRunsBesideSettings(): Record<string, string> {
  return {
    PLUGIN_TEST_RUN_CPU_SECONDS: String(TEST_RUN_CPU_SECONDS),
    PLUGIN_TEST_RUN_WALL_SECONDS: String(TEST_RUN_CPU_SECONDS * 15),
    PLUGIN_TEST_RUN_QUEUE: String(Math.max(0, IN_FLIGHT - availableParallelism())),
  };
}

export async function measureTestRunsBeside(
  config: AppConfig,
  options: { duration: number; connections: number; bcryptCost: number; progress: (text: string) => void },
): Promise<TestRunsBesideReport> {
  const { progress } = options;
  const app = await startApp(config);
  try {
    await app.ready;
    progress(`test-runs beside: seeding 3 users, ${SESSIONS_PER_USER} sessions each, the spinner plugin`);
    const seeded = await seed(app.origin, app.dataSource, {
      sessions: SESSIONS_PER_USER,
      approvedPlugins: 0,
      bcryptCost: options.bcryptCost,
    });
    const spinner = await uploadSpinner(app.origin, seeded.reader.token);
    const testRunPath = `/api/v1/community-plugins/${spinner.id}/versions/${spinner.version}/test-run/`;
    const spec = (title: string): LoadSpec => ({
      title,
      origin: app.origin,
      method: 'GET',
      path: '/api/v1/sessions/',
      headers: { authorization: `Bearer ${seeded.reader.token}` },
      connections: options.connections,
      duration: options.duration,
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
      progress(`test-runs beside, round ${round}/${ROUNDS}: GET /api/v1/sessions/ idle`);
      await measure('idle', 'GET /api/v1/sessions/, idle');
      progress(
        `test-runs beside, round ${round}/${ROUNDS}: GET /api/v1/sessions/ while ${IN_FLIGHT} test-runs are admitted`,
      );
      const stop = new AbortController();
      const keeper = keepTestRunsBusy(app.origin, seeded.admin.token, testRunPath, stop.signal);
      // The load starts once the first runs are admitted (a failed keeper ends the bench).
      await Promise.race([sleep(500), keeper]);
      await measure('beside', `GET /api/v1/sessions/ + ${IN_FLIGHT} test-runs`);
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
    const [{ timedOut }] = (await app.dataSource.query(
      'SELECT COUNT(*) AS "timedOut" FROM plugin_test_runs WHERE status = \'timed-out\'',
    )) as Array<{ timedOut: number | string }>;
    return {
      idle: summarize(pooled.idle, usage.idle, false),
      beside: summarize(pooled.beside, usage.beside, false),
      started,
      timedOut: Number(timedOut),
    };
  } finally {
    await app.close();
  }
}

export function formatTestRunsBeside(report: TestRunsBesideReport): string {
  const row = (result: LoadResult) => [
    result.title,
    result.requestsPerSecond.toFixed(0),
    result.p50.toFixed(1),
    result.p99.toFixed(1),
    String(result.failures),
  ];
  return [
    table(['load', 'req/s', 'p50 ms', 'p99 ms', 'failures'], [row(report.idle), row(report.beside)]),
    `p99 beside / idle: ${(report.beside.p99 / report.idle.p99).toFixed(2)}; test-runs started: ${report.started} ` +
      `(${report.timedOut} timed-out at their ${TEST_RUN_CPU_SECONDS} s CPU limit)`,
  ].join('\n');
}
