/**
 * Other users' GET while reviewers' diffs run: GET /api/v1/sessions/ alone, then the same load
 * while rounds of eight diffs of 20,000-line versions (2,000 changed lines each, every pair
 * new, so no diff is served from the cache) are requested at once, one round after another.
 */
import type { AppConfig } from '../src/config/app-config';
import { startApp } from './app-server';
import { addUsage, NO_USAGE, runLoad, summarize } from './load';
import type { LoadResult, LoadSpec, RawLoad } from './load-spec';
import { table } from './report';
import { seed } from './seed';

const PLUGINS = 8;
const ROUNDS = 2;
/** With the 5 lines of the head, the validator's limit of 20,000 lines (about 240 KB). */
const LINES = 19_995;
const CONNECTIONS = 10;
const IDLE_SECONDS = 4;
/**
 * The GET load beside the diffs runs in runs of this many seconds until the last round has
 * answered: how long the rounds take depends on the validator and on the machine.
 */
const BESIDE_CHUNK_SECONDS = 2;
/** The diffs start once the GET load runs. */
const DIFFS_DELAY_MS = 500;

/** With the 99.9th percentile: a stall of the event loop holds every answer in flight at once. */
type Measured = LoadResult & { p999: number };

function measured(runs: RawLoad[], result: LoadResult): Measured {
  const latencies = runs.flatMap((run) => run.latencies).sort((a, b) => a - b);
  return { ...result, p999: latencies[Math.ceil(0.999 * latencies.length) - 1] ?? NaN };
}

export interface DiffsBesideReport {
  idle: Measured;
  beside: Measured;
  /** Wall time of each round of eight diffs at once, ms, and their answers by status. */
  rounds: Array<{ ms: number; statuses: Record<string, number> }>;
}

/** Version 1.<round>.0 of plugin `plugin`: line i ends in the last round that changed it (i % 10). */
function versionSource(plugin: number, round: number): string {
  const head = `DESCRIPTION = "Diff bench plugin ${plugin}"\n\n\ndef run(PluginInfo):\n    return []\n`;
  const lines = Array.from({ length: LINES }, (_, i) => {
    const changedIn = i % 10 <= round && i % 10 !== 0 ? i % 10 : 0;
    return `p${plugin}_${String(i).padStart(5, '0')} = ${changedIn}\n`;
  });
  return head + lines.join('');
}

async function call(origin: string, token: string, method: string, path: string, form?: FormData) {
  const response = await fetch(origin + path, {
    method,
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, text };
}

async function expectOk(answer: Promise<{ status: number; text: string }>, what: string) {
  const { status, text } = await answer;
  if (status >= 300) throw new Error(`diff bench seeding: ${what} answered ${status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as { data: { id: number } };
}

export async function measureDiffsBeside(
  config: AppConfig,
  options: { bcryptCost: number; progress: (text: string) => void },
): Promise<DiffsBesideReport> {
  const app = await startApp(config);
  await app.ready;
  try {
    options.progress(
      `diffs beside GET: seeding ${PLUGINS} plugins of ${ROUNDS + 1} versions, ${LINES} lines each`,
    );
    const { admin, reader } = await seed(app.origin, app.dataSource, {
      sessions: 10,
      approvedPlugins: 0,
      bcryptCost: options.bcryptCost,
    });
    const file = (plugin: number, round: number) =>
      new Blob([versionSource(plugin, round)], { type: 'text/x-python' });
    const ids = await Promise.all(
      Array.from({ length: PLUGINS }, async (_, plugin) => {
        const form = new FormData();
        form.set('name', `diff-bench-${plugin}`);
        form.set('description', 'A long plugin whose versions reviewers diff');
        form.set('group', 'web');
        form.set('type', 'passive');
        form.set('author', 'svc-bench');
        form.set('plugin_file', file(plugin, 0), 'long.py');
        const { data } = await expectOk(
          call(app.origin, reader.token, 'POST', '/api/v1/community-plugins/upload', form),
          'upload',
        );
        for (let round = 1; round <= ROUNDS; round += 1) {
          // Approve what is waiting (read first), then the next version.
          await expectOk(
            call(app.origin, admin.token, 'GET', `/api/v1/community-plugins/${data.id}/source`),
            'source',
          );
          await expectOk(
            call(app.origin, admin.token, 'POST', `/api/v1/community-plugins/${data.id}/approve`),
            'approve',
          );
          const next = new FormData();
          next.set('version', `1.${round}.0`);
          next.set('plugin_file', file(plugin, round), 'long.py');
          await expectOk(
            call(app.origin, reader.token, 'POST', `/api/v1/community-plugins/${data.id}/versions/`, next),
            'new version',
          );
        }
        return data.id;
      }),
    );

    const get: LoadSpec = {
      title: 'GET sessions',
      origin: app.origin,
      method: 'GET',
      path: '/api/v1/sessions/',
      headers: { authorization: `Bearer ${reader.token}` },
      connections: CONNECTIONS,
      duration: IDLE_SECONDS,
      expectStatus: 200,
      expectBodyIncludes: '"status":"success"',
    };
    options.progress(`diffs beside GET: GET sessions alone, ${IDLE_SECONDS} s`);
    const idleLoad = await runLoad({ warmup: 2, specs: [get] });
    const idle = measured(idleLoad.runs, summarize(idleLoad.runs, idleLoad));

    options.progress(`diffs beside GET: GET sessions while ${ROUNDS} rounds of ${PLUGINS} diffs run`);
    const rounds: DiffsBesideReport['rounds'] = [];
    let diffsDone = false;
    const diffs = (async () => {
      await new Promise((resolve) => setTimeout(resolve, DIFFS_DELAY_MS));
      for (let round = 1; round <= ROUNDS; round += 1) {
        const started = performance.now();
        const answers = await Promise.all(
          ids.map((id) =>
            call(
              app.origin,
              admin.token,
              'GET',
              `/api/v1/community-plugins/${id}/versions/1.${round}.0/diff`,
            ),
          ),
        );
        const statuses: Record<string, number> = {};
        for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
        rounds.push({ ms: performance.now() - started, statuses });
      }
    })().finally(() => {
      diffsDone = true;
    });
    const besideRuns: RawLoad[] = [];
    let besideUsage = NO_USAGE;
    while (!diffsDone) {
      const chunk = await runLoad({ warmup: 0, specs: [{ ...get, duration: BESIDE_CHUNK_SECONDS }] });
      besideRuns.push(...chunk.runs);
      besideUsage = addUsage(besideUsage, chunk);
    }
    await diffs;
    const beside = measured(besideRuns, summarize(besideRuns, besideUsage, false));
    return { idle, beside, rounds };
  } finally {
    await app.close();
  }
}

export function formatDiffsBeside(report: DiffsBesideReport): string {
  const row = (name: string, result: Measured) => [
    name,
    result.requestsPerSecond.toFixed(0),
    result.p50.toFixed(1),
    result.p99.toFixed(1),
    result.p999.toFixed(1),
    result.max.toFixed(1),
    Object.entries(result.statuses)
      .map(([status, count]) => `${status}x${count}`)
      .join(' '),
  ];
  return [
    table(
      ['GET /api/v1/sessions/', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'answers'],
      [
        row('alone', report.idle),
        row(`while ${ROUNDS} rounds of ${PLUGINS} diffs at once run`, report.beside),
      ],
    ),
    `rounds of ${PLUGINS} diffs (${LINES + 5} lines, 2,000 changed, each pair new): ` +
      report.rounds
        .map(
          (round) =>
            `${(round.ms / 1000).toFixed(2)} s (${Object.entries(round.statuses)
              .map(([status, count]) => `${status}x${count}`)
              .join(' ')})`,
        )
        .join(', '),
  ].join('\n');
}
