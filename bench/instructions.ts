/**
 * `npm run bench:instructions`: the CPU work of one answer, as instructions counted by
 * valgrind's callgrind. A count is the same whatever else the machine runs, where req/s and
 * CPU time move by a factor of several on a shared machine (docs/benchmarks.md), so this is
 * the figure to compare two servers or two settings by while other work shares the cores.
 *
 * The app is seeded once (natively, in this process), then each server runs under callgrind
 * on that database in turn: the bare baseline, the app, and the app keeping its metrics
 * (METRICS_PORT). For each route: warm-up answers (the JIT's tiers go by calls, not time),
 * then two rounds of: all garbage collected, counters zeroed, the measured answers two at a
 * time, counters dumped. What the server's timers do meanwhile counts too, and the collections
 * a round's own garbage needs: more answers a round (BENCH_ANSWERS) make their share steadier.
 * Everything of the process counts, worker threads and the garbage collector included.
 *
 * Environment: BENCH_DATABASE_URL (a MySQL/MariaDB database of its own: it is EMPTIED; default
 * SQLite in a temporary directory), BENCH_ANSWERS (measured answers per route, default 300),
 * BENCH_VARIANTS (which servers, default `baseline,app,metrics`; `twin` and BENCH_TWIN_DIR as in
 * bench/cpu-per-answer.ts). Arguments: the routes' keys (serial-answers.ts), all by default.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { answers, IN_FLIGHT, chosenRoutes, type Route, sender } from './serial-answers';
import { positiveInteger, progress } from './app-server';
import { chosenVariants, seededSettings, ServerProcess, type Variant } from './server-process';

const run = promisify(execFile);
const WARMUP = 1000;
const ROUNDS = 2;

/** A server under callgrind, with the commands of callgrind_control on it. */
class Counted extends ServerProcess {
  private constructor(
    started: Awaited<ReturnType<typeof ServerProcess.spawn>>,
    private readonly outDir: string,
  ) {
    super(started.child, started.origin, started.lines);
  }

  static async startCounted(variant: Variant, workDir: string, settings: Record<string, string>) {
    const outDir = mkdtempSync(join(workDir, 'callgrind-'));
    const wrapper = ['valgrind', '--tool=callgrind', `--callgrind-out-file=${join(outDir, 'out')}`];
    return new Counted(await ServerProcess.spawn(variant, workDir, settings, wrapper), outDir);
  }

  async zero(): Promise<void> {
    await run('callgrind_control', ['--zero', String(this.pid)]);
  }

  /** Instructions since the last zero, from the dump this asks for. */
  async dump(): Promise<number> {
    const before = new Set(readdirSync(this.outDir));
    await run('callgrind_control', ['--dump', String(this.pid)]);
    const written = readdirSync(this.outDir).filter((name) => !before.has(name));
    if (written.length !== 1) throw new Error(`callgrind wrote ${written.length} dumps, not one`);
    const text = readFileSync(join(this.outDir, written[0]), 'utf8');
    const totals = /^(?:summary|totals):\s+(\d+)/m.exec(text);
    if (!totals) throw new Error('a callgrind dump without totals');
    return Number(totals[1]);
  }
}

/** Instructions an answer in each of ROUNDS windows. */
async function measure(server: Counted, route: Route, token: string, count: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  try {
    const { send, counts } = await sender(agent, server.origin, route, token);
    await answers(WARMUP, send);
    const rounds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      counts.full = 0;
      await server.collect();
      await server.zero();
      await answers(count, send);
      rounds.push((await server.dump()) / count);
      if (counts.full > 0)
        progress(`  ${counts.full} of the round's ${count} answers were full (the version moved)`);
    }
    return rounds;
  } finally {
    agent.destroy();
  }
}

async function main(): Promise<void> {
  const routes = chosenRoutes(process.argv.slice(2));
  const count = positiveInteger('BENCH_ANSWERS', 300);
  const databaseUrl = process.env.BENCH_DATABASE_URL?.trim() || undefined;
  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-instructions-'));
  const load = loadavg();
  try {
    progress('seeding');
    const { settings, token } = await seededSettings(workDir, databaseUrl);

    const figures = new Map<string, Map<Variant, number[]>>();
    const variants = chosenVariants(settings, 'baseline,app,metrics');
    for (const [variant, variantSettings] of variants) {
      progress(`${variant}: starting under callgrind (minutes)`);
      const server = await Counted.startCounted(variant, workDir, variantSettings);
      try {
        for (const route of routes) {
          if (variant === 'baseline' && !route.baseline) continue;
          progress(`${variant}: ${route.name}, ${count} answers`);
          const perAnswer = await measure(server, route, token, count);
          progress(
            `  ${perAnswer.map((value) => Math.round(value).toLocaleString('en')).join(', ')} an answer`,
          );
          if (!figures.has(route.name)) figures.set(route.name, new Map());
          figures.get(route.name)!.set(variant, perAnswer);
        }
      } finally {
        await server.stop();
      }
    }

    const database = databaseUrl ? 'MySQL/MariaDB (mysql2)' : 'SQLite (better-sqlite3)';
    console.log(
      `\nsvc-api instructions per answer (callgrind), ${database}, ${count} answers per row, ` +
        `load average ${load.map((value) => value.toFixed(2)).join(' ')} at start`,
    );
    console.log(
      '| route | baseline | app | baseline / app | app with metrics | metrics cost |\n|---|---:|---:|---:|---:|---:|',
    );
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const shown = (values: number[] | undefined) =>
      values === undefined
        ? '-'
        : values.map((value) => `${Math.round(value / 1000).toLocaleString('en')}k`).join(', ');
    for (const [name, row] of figures) {
      const base = row.get('baseline');
      const plain = row.get('app');
      const metered = row.get('app with metrics');
      // As the req/s ratios of `npm run bench` read: the app's rate over the baseline's, at equal work per core.
      const ratio = base && plain ? `${(mean(base) / mean(plain)).toFixed(2)}x` : '-';
      const cost =
        plain && metered ? `${(((mean(metered) - mean(plain)) / mean(plain)) * 100).toFixed(1)} %` : '-';
      console.log(`| ${name} | ${shown(base)} | ${shown(plain)} | ${ratio} | ${shown(metered)} | ${cost} |`);
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
