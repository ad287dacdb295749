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
 * (default 8), BENCH_VARIANTS (`app,metrics` by default; `baseline` adds the bare server).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, ROUTES, sender } from './serial-answers';
import { positiveInteger, progress } from './app-server';
import { chosenVariants, seededSettings, ServerProcess, type Variant } from './server-process';

const WARMUP = 2000;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function main(): Promise<void> {
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
    for (const route of ROUTES) {
      const taking = servers.filter(([variant]) => variant !== 'baseline' || route.baseline);
      const agents = taking.map(() => new Agent({ keepAlive: true, maxSockets: inFlight }));
      try {
        const senders = await Promise.all(
          taking.map(([, server], index) => sender(agents[index], server.origin, route, token)),
        );
        progress(`${route.name}: warm-up, then ${rounds} rounds of ${count} answers on each server`);
        for (const each of senders) await answers(WARMUP, each.send, inFlight);
        const perAnswer = taking.map(() => [] as number[]);
        for (let round = 0; round < rounds; round++) {
          const order = taking.map((_, index) => index);
          if (round % 2) order.reverse();
          for (const index of order) {
            const server = taking[index][1];
            senders[index].counts.full = 0;
            await server.collect();
            const before = server.cpuNanoseconds();
            await answers(count, senders[index].send, inFlight);
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
        const metered = taking.findIndex(([variant]) => variant === 'app with metrics');
        let cost = '';
        if (app >= 0 && metered >= 0) {
          // Each round's own pair: the servers ran back to back, under the same load.
          const paired = perAnswer[metered].map((value, round) => value / perAnswer[app][round] - 1);
          cost = `; metrics cost ${(median(paired) * 100).toFixed(1)} % (rounds ${(Math.min(...paired) * 100).toFixed(1)} to ${(Math.max(...paired) * 100).toFixed(1)} %)`;
        }
        table.push(`${route.name}: ${shown.join(', ')}${cost}`);
        progress(table[table.length - 1]);
      } finally {
        for (const agent of agents) agent.destroy();
      }
    }
    const database = databaseUrl ? 'MySQL/MariaDB (mysql2)' : 'SQLite (better-sqlite3)';
    console.log(
      `\nsvc-api CPU per answer (kernel's count, all threads; median of ${rounds} rounds of ${count}, ${inFlight} in flight), ${database}, ` +
        `load average ${loadAtStart.map((value) => value.toFixed(2)).join(' ')} at start, ` +
        `${loadavg()
          .map((value) => value.toFixed(2))
          .join(' ')} at the end`,
    );
    for (const line of table) console.log(`- ${line}`);
  } finally {
    for (const [, server] of servers) await server.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
