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
 * BENCH_VARIANTS (which servers, default `baseline,app,metrics`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config/app-config';
import { emptyDatabase } from '../test/helpers/database';
import { benchSettings, startApp } from './app-server';
import { seed } from './seed';

const run = promisify(execFile);
const WARMUP = 1000;
const ROUNDS = 2;
const IN_FLIGHT = 2;
const START_TIMEOUT_MS = 15 * 60_000;

interface Route {
  name: string;
  path: string;
  /** The baseline answers only the contract's routes it was written for. */
  baseline: boolean;
  /** Sends the ETag of a first answer back, so the app answers 304. */
  revalidate?: boolean;
}

const ROUTES: Route[] = [
  { name: 'GET /api/v1/sessions/ (10 sessions)', path: '/api/v1/sessions/', baseline: true },
  {
    name: 'GET /api/v1/community-plugins/ (200 approved, limit 50)',
    path: '/api/v1/community-plugins/',
    baseline: true,
  },
  {
    name: 'the same page, If-None-Match current (304)',
    path: '/api/v1/community-plugins/',
    baseline: false,
    revalidate: true,
  },
];

type Variant = 'baseline' | 'app' | 'app with metrics';

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a positive integer`);
  return Number(raw);
}

const progress = (text: string) => process.stderr.write(`[bench] ${text}\n`);

/** One answer; its status must be one of those expected. */
function get(
  agent: Agent,
  origin: string,
  path: string,
  headers: Record<string, string>,
  statuses: number[],
) {
  return new Promise<{ status: number; etag?: string }>((resolve, reject) => {
    const call = request(`${origin}${path}`, { agent, headers }, (response) => {
      response.resume();
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        if (!statuses.includes(status))
          reject(new Error(`${path} answered ${status}, not ${statuses.join(' or ')}`));
        else resolve({ status, etag: response.headers.etag });
      });
    });
    call.on('error', reject);
    call.end();
  });
}

/**
 * The ETag that the next request is answered 304 with. A full answer may carry a tag a second
 * old (docs/decisions/answer-versions.md), and the server's background work (the re-check after
 * start-up) may write meanwhile: asked with it, the server answers the current page and tag.
 */
async function currentTag(agent: Agent, origin: string, path: string, headers: Record<string, string>) {
  let tag: string | undefined;
  for (let attempt = 0; attempt < 10; attempt++) {
    const asked = tag === undefined ? headers : { ...headers, 'if-none-match': tag };
    const answer = await get(agent, origin, path, asked, [200, 304]);
    if (answer.status === 304 && tag !== undefined) return tag;
    if (answer.status !== 200 || !answer.etag)
      throw new Error(`${path} answered ${answer.status} without an ETag`);
    tag = answer.etag;
  }
  throw new Error(`${path} never answered 304: its version kept changing`);
}

async function answers(count: number, send: () => Promise<unknown>): Promise<void> {
  let left = count;
  const lane = async () => {
    while (left-- > 0) await send();
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

/** A server under callgrind, with the commands of callgrind_control on it. */
class Counted {
  private constructor(
    private readonly child: ChildProcess,
    private readonly outDir: string,
    readonly origin: string,
    private readonly lines: ReturnType<typeof createInterface>,
  ) {}

  static async start(variant: Variant, workDir: string, settings: Record<string, string>) {
    const outDir = mkdtempSync(join(workDir, 'callgrind-'));
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        `--callgrind-out-file=${join(outDir, 'out')}`,
        process.execPath,
        '--expose-gc',
        '--require',
        join(__dirname, '..', 'test', 'helpers', 'ts-register.js'),
        join(__dirname, 'instructions-server.ts'),
        variant === 'baseline' ? 'baseline' : 'app',
        workDir,
      ],
      {
        env: { ...process.env, SVC_BENCH_SETTINGS: JSON.stringify(settings) },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const stderr: string[] = [];
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const lines = createInterface({ input: child.stdout! });
    const origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${variant} did not start`)), START_TIMEOUT_MS);
      lines.on('line', (line) => {
        const match = /^listening (\S+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`valgrind could not be started (apt-get install valgrind): ${error.message}`));
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${variant} exited (${code}) before listening:\n${stderr.join('').slice(-3000)}`));
      });
    });
    return new Counted(child, outDir, origin, lines);
  }

  /** All garbage collected (a full collection in the server), before a round is counted. */
  async collect(): Promise<void> {
    const collected = new Promise<void>((resolve) => {
      const seen = (line: string) => {
        if (line !== 'collected') return;
        this.lines.off('line', seen);
        resolve();
      };
      this.lines.on('line', seen);
    });
    this.child.stdin!.write('collect\n');
    await collected;
  }

  async zero(): Promise<void> {
    await run('callgrind_control', ['--zero', String(this.child.pid)]);
  }

  /** Instructions since the last zero, from the dump this asks for. */
  async dump(): Promise<number> {
    const before = new Set(readdirSync(this.outDir));
    await run('callgrind_control', ['--dump', String(this.child.pid)]);
    const written = readdirSync(this.outDir).filter((name) => !before.has(name));
    if (written.length !== 1) throw new Error(`callgrind wrote ${written.length} dumps, not one`);
    const text = readFileSync(join(this.outDir, written[0]), 'utf8');
    const totals = /^(?:summary|totals):\s+(\d+)/m.exec(text);
    if (!totals) throw new Error('a callgrind dump without totals');
    return Number(totals[1]);
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/**
 * Instructions an answer in each of ROUNDS windows. Revalidating, an answer 200 (the version
 * moved: the server's own background work writes too) takes its new tag and is counted.
 */
async function measure(server: Counted, route: Route, token: string, count: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  try {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    const statuses = route.revalidate ? [304, 200] : [200];
    if (route.revalidate)
      headers['if-none-match'] = await currentTag(agent, server.origin, route.path, headers);
    let full = 0;
    const send = async () => {
      const answer = await get(agent, server.origin, route.path, headers, statuses);
      if (route.revalidate && answer.status === 200) {
        full += 1;
        if (answer.etag) headers['if-none-match'] = answer.etag;
      }
    };
    await answers(WARMUP, send);
    const rounds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      full = 0;
      await server.collect();
      await server.zero();
      await answers(count, send);
      rounds.push((await server.dump()) / count);
      if (full > 0) progress(`  ${full} of the round's ${count} answers were full (the version moved)`);
    }
    return rounds;
  } finally {
    agent.destroy();
  }
}

async function main(): Promise<void> {
  const count = positiveInteger('BENCH_ANSWERS', 300);
  const databaseUrl = process.env.BENCH_DATABASE_URL?.trim() || undefined;
  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-instructions-'));
  const load = loadavg();
  try {
    // One secret for the seeding app and the servers measured: the seeded tokens stay valid.
    const settings = benchSettings(workDir, databaseUrl, { BCRYPT_COST: '4' });
    delete settings.METRICS_PORT;
    if (databaseUrl) await emptyDatabase(databaseUrl);
    progress('seeding');
    const app = await startApp(loadConfig(settings, workDir));
    await app.ready;
    const seeded = await seed(app.origin, app.dataSource, {
      sessions: 10,
      approvedPlugins: 200,
      bcryptCost: 4,
    });
    await app.close();

    const figures = new Map<string, Map<Variant, number[]>>();
    const chosen = (process.env.BENCH_VARIANTS ?? 'baseline,app,metrics')
      .split(',')
      .map((each) => each.trim());
    const variants = (
      [
        ['baseline', settings],
        ['app', settings],
        ['app with metrics', { ...settings, METRICS_PORT: '0' }],
      ] as Array<[Variant, Record<string, string>]>
    ).filter(([variant]) => chosen.includes(variant === 'app with metrics' ? 'metrics' : variant));
    for (const [variant, variantSettings] of variants) {
      progress(`${variant}: starting under callgrind (minutes)`);
      const server = await Counted.start(variant, workDir, variantSettings);
      try {
        for (const route of ROUTES) {
          if (variant === 'baseline' && !route.baseline) continue;
          progress(`${variant}: ${route.name}, ${count} answers`);
          const perAnswer = await measure(server, route, seeded.reader.token, count);
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
