/**
 * `npm run bench:cpu`: the CPU time one answer costs the server, as the kernel counts it
 * (every thread of the server's process, from /proc), for the app and the app keeping its
 * metrics, in alternating rounds. Where req/s moves with whatever else shares the cores, the
 * CPU a process spent on a known number of answers moves far less, and alternating the two
 * servers round by round lets a drift in the machine fall on both alike: the figure to prove a
 * small cost by (docs/benchmarks.md).
 *
 * The app is seeded once (natively, in this process); both servers then run on that database,
 * each in a process of its own. For each route: warm-up answers on each (the JIT's tiers go by
 * calls), then BENCH_ROUNDS rounds; in each, each server in turn (the order swapped every
 * round) collects all garbage, then answers BENCH_ANSWERS requests, BENCH_IN_FLIGHT at a time
 * (default 10, as `npm run bench`'s connections: a busy server, whose cost per answer is not
 * its wake-ups'). A server's timers count too, as they would in production.
 *
 * Environment: BENCH_DATABASE_URL (a MySQL/MariaDB database of its own: it is EMPTIED; default
 * SQLite in a temporary directory), BENCH_ANSWERS (per round, default 2000), BENCH_ROUNDS
 * (default 8), BENCH_VARIANTS (`app,metrics` by default; `baseline` adds the bare server, `twin`
 * a second app server alike, whose difference from the first is the bench's own noise), and
 * BENCH_TWIN_DIR (the twin runs another checkout's code instead: an A/B of two commits).
 * Arguments: the routes' keys (`sessions`, `catalogue`, `revalidated`), all by default.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, chosenRoutes, sender } from './serial-answers';
import { positiveInteger, progress } from './app-server';
import { hookNanoseconds, scrapeMilliseconds } from './metrics-parts';
import { chosenVariants, seededSettings, ServerProcess, type Variant } from './server-process';

const WARMUP = 2000;
const IDLE_ROUNDS = 4;
const IDLE_MS = 5000;
/** Prometheus' default, and deploy/cluster/prometheus.yml's. */
const SCRAPE_INTERVAL_S = 15;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function main(): Promise<void> {
  const routes = chosenRoutes(process.argv.slice(2));
  const count = positiveInteger('BENCH_ANSWERS', 2000);
  const rounds = positiveInteger('BENCH_ROUNDS', 8);
  const inFlight = positiveInteger('BENCH_IN_FLIGHT', 10);
  const databaseUrl = process.env.BENCH_DATABASE_URL?.trim() || undefined;
  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-cpu-'));
  const loadAtStart = loadavg();
  const servers: Array<[Variant, ServerProcess]> = [];
  try {
    progress('seeding');
    const { settings, token } = await seededSettings(workDir, databaseUrl);

    const variants = chosenVariants(settings, 'app,metrics');
    for (const [variant, variantSettings] of variants) {
      progress(`${variant}: starting`);
      servers.push([variant, await ServerProcess.start(variant, workDir, variantSettings)]);
    }

    const table: string[] = [];
    /** Per route, the app's CPU per answer and answers a second: what the metrics' parts are shares of. */
    const appCosts: Array<{ name: string; microseconds: number; perSecond: number }> = [];
    for (const route of routes) {
      const taking = servers.filter(([variant]) => variant !== 'baseline' || route.baseline);
      const agents = taking.map(() => new Agent({ keepAlive: true, maxSockets: inFlight }));
      try {
        const senders = await Promise.all(
          taking.map(([, server], index) => sender(agents[index], server.origin, route, token)),
        );
        progress(`${route.name}: warm-up, then ${rounds} rounds of ${count} answers on each server`);
        for (const each of senders) await answers(WARMUP, each.send, inFlight);
        const perAnswer = taking.map(() => [] as number[]);
        const seconds = taking.map(() => 0);
        for (let round = 0; round < rounds; round++) {
          const order = taking.map((_, index) => index);
          if (round % 2) order.reverse();
          for (const index of order) {
            const server = taking[index][1];
            senders[index].counts.full = 0;
            await server.collect();
            const before = server.cpuNanoseconds();
            const started = process.hrtime.bigint();
            await answers(count, senders[index].send, inFlight);
            seconds[index] += Number(process.hrtime.bigint() - started) / 1e9;
            perAnswer[index].push((server.cpuNanoseconds() - before) / count / 1000);
            if (senders[index].counts.full > 0)
              progress(
                `  ${taking[index][0]}: ${senders[index].counts.full} answers were full (the version moved)`,
              );
          }
        }
        const shown = taking.map(
          ([variant], index) =>
            `${variant} ${median(perAnswer[index]).toFixed(1)} µs (${Math.min(...perAnswer[index]).toFixed(1)} to ${Math.max(...perAnswer[index]).toFixed(1)})`,
        );
        const app = taking.findIndex(([variant]) => variant === 'app');
        if (app >= 0)
          appCosts.push({
            name: route.name,
            microseconds: median(perAnswer[app]),
            perSecond: (count * rounds) / seconds[app],
          });
        const metered = taking.findIndex(([variant]) => variant === 'app with metrics');
        const twin = taking.findIndex(([variant]) => variant === 'app again');
        // Each round's own pair: the servers ran back to back, under the same load.
        const against = (other: number, what: string) => {
          if (app < 0 || other < 0) return '';
          const paired = perAnswer[other].map((value, round) => value / perAnswer[app][round] - 1);
          return `; ${what} ${(median(paired) * 100).toFixed(1)} % (rounds ${(Math.min(...paired) * 100).toFixed(1)} to ${(Math.max(...paired) * 100).toFixed(1)} %)`;
        };
        const cost = against(metered, 'metrics cost') + against(twin, 'the twin differs by');
        table.push(`${route.name}: ${shown.join(', ')}${cost}`);
        progress(table[table.length - 1]);
      } finally {
        for (const agent of agents) agent.destroy();
      }
    }
    const parts = await metricsByParts(servers, appCosts);
    const database = databaseUrl ? 'MySQL/MariaDB (mysql2)' : 'SQLite (better-sqlite3)';
    console.log(
      `\nsvc-api CPU per answer (kernel's count, all threads; median of ${rounds} rounds of ${count}, ${inFlight} in flight), ${database}, ` +
        `load average ${loadAtStart.map((value) => value.toFixed(2)).join(' ')} at start, ` +
        `${loadavg()
          .map((value) => value.toFixed(2))
          .join(' ')} at the end`,
    );
    for (const line of table) console.log(`- ${line}`);
    for (const line of parts) console.log(line);
  } finally {
    for (const [, server] of servers) await server.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * The metrics' parts (bench/metrics-parts.ts) as shares of the app's answers: the hook on each,
 * and what runs by the clock (the process metrics, a scrape every SCRAPE_INTERVAL_S) spread over
 * the answers a second the app gave in its rounds.
 */
async function metricsByParts(
  servers: Array<[Variant, ServerProcess]>,
  appCosts: Array<{ name: string; microseconds: number; perSecond: number }>,
): Promise<string[]> {
  const app = servers.find(([variant]) => variant === 'app')?.[1];
  const metered = servers.find(([variant]) => variant === 'app with metrics')?.[1];
  if (app === undefined || metered === undefined) return [];
  progress(`idle: ${IDLE_ROUNDS} rounds of ${IDLE_MS / 1000} s on each server; the request hook; a scrape`);
  const idle = { app: [] as number[], metered: [] as number[] };
  for (let round = 0; round < IDLE_ROUNDS; round++) {
    const order = round % 2 ? (['metered', 'app'] as const) : (['app', 'metered'] as const);
    for (const which of order) {
      const server = which === 'app' ? app : metered;
      const before = server.cpuNanoseconds();
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      idle[which].push((server.cpuNanoseconds() - before) / IDLE_MS);
    }
  }
  const hook = (await hookNanoseconds(9, 200_000)).map((ns) => ns / 1000);
  const scrape = await scrapeMilliseconds(20);
  const idleApp = median(idle.app);
  const idleMetered = median(idle.metered);
  // Microseconds of CPU a second: what idling with metrics adds, and a scrape's share of its interval.
  const clocked = Math.max(0, idleMetered - idleApp) + (scrape * 1000) / SCRAPE_INTERVAL_S;
  const perAnswer = median(hook);
  const lines = [
    `\nmetrics by parts: the request hook ${perAnswer.toFixed(2)} µs an answer (rounds ${hook.map((value) => value.toFixed(2)).join(', ')}); ` +
      `idle ${idleApp.toFixed(0)} µs of CPU a second without metrics, ${idleMetered.toFixed(0)} with (rounds ${idle.app.map((value) => value.toFixed(0)).join(', ')} and ${idle.metered.map((value) => value.toFixed(0)).join(', ')}); ` +
      `a scrape ${scrape.toFixed(2)} ms, every ${SCRAPE_INTERVAL_S} s`,
  ];
  for (const route of appCosts) {
    const added = perAnswer + clocked / route.perSecond;
    lines.push(
      `- ${route.name}: ${added.toFixed(2)} µs an answer of the app's ${route.microseconds.toFixed(1)} at ${route.perSecond.toFixed(0)} answers a second: ${((added / route.microseconds) * 100).toFixed(2)} %`,
    );
  }
  return lines;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
