/**
 * `npm run bench:profile`: where a GET's CPU time goes, by package, in the app and in the bare
 * baseline. Each server is loaded alone (10 connections, after a warm-up, in two alternating
 * rounds) under the V8 sampling profiler; self time is summed by the package of each sampled function and divided by the
 * answers given. The profiler counts wall time on the main thread, so a busy machine inflates
 * every row (most of all system calls such as writev): trust a quiet run. What the app spends beyond the baseline, row by row, is what the framework
 * and our own layers cost. Prints a table; writes nothing into the repository.
 *
 * Environment: BENCH_DATABASE_URL (a MySQL/MariaDB database of its own; it is EMPTIED first;
 * default SQLite in a temporary directory), BENCH_DURATION (seconds per server, default 6),
 * BENCH_METRICS=on (the app keeps its metrics: their cost is the prom-client and src/metrics rows),
 * BENCH_IF_NONE_MATCH=on (the app is asked with the ETag it gave just before: its 304s, against
 * the baseline's full answers).
 * Arguments: the paths to profile (default /api/v1/sessions/ and /api/v1/community-plugins/).
 */
import { Session } from 'node:inspector/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyDatabase } from '../test/helpers/database';
import { benchConfig, startApp } from './app-server';
import { startBaseline } from './baseline-server';
import { runLoad } from './load';
import { seed } from './seed';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
type CallFrame = ProfileNode['callFrame'];
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Node's own HTTP, stream and event modules count as one row: the baseline pays them too. */
const NODE_CORE = /^node:(internal|_http_\w+|net|events|stream|buffer|timers)$/;
const ROUNDS = 2;
/** Not CPU time spent on requests: waiting, and the profiler itself. */
const NOT_WORK = new Set(['(idle)', '(program)', '(native) dispatch']);

function packageOf({ functionName, url }: CallFrame): string {
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName || 'anonymous'}`;
  if (url.startsWith('node:')) {
    const module = `node:${url.slice('node:'.length).split('/')[0]}`;
    return NODE_CORE.test(module) ? 'node (http, streams, events)' : module;
  }
  const packages = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g);
  if (packages) return packages[packages.length - 1].slice('node_modules/'.length);
  const own = /\/(src|bench)\/([^/]+)/.exec(url);
  return own ? `${own[1]}/${own[2]}` : url;
}

/** A function by its name, file and line. */
function functionOf({ functionName, url, lineNumber }: CallFrame): string {
  const where = url.replace(/^.*node_modules\//, '').replace(/^.*\/(src|bench)\//, '$1/');
  return `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
}

/** Adds a profile's self time, in microseconds, to each total under the key it gives a frame. */
function addSelfTime(totals: [Map<string, number>, (frame: CallFrame) => string][], profile: Profile): void {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  profile.samples.forEach((id, index) => {
    const frame = nodes.get(id)!.callFrame;
    if (NOT_WORK.has(packageOf(frame))) return;
    for (const [total, keyOf] of totals) {
      const key = keyOf(frame);
      total.set(key, (total.get(key) ?? 0) + profile.timeDeltas[index]);
    }
  });
}

function perAnswer(totals: Map<string, number>, answers: number): Map<string, number> {
  return new Map([...totals].map(([name, micros]) => [name, micros / answers]));
}

function table(app: Map<string, number>, baseline: Map<string, number>): string {
  const names = [...new Set([...app.keys(), ...baseline.keys()])].sort(
    (a, b) => (app.get(b) ?? 0) - (app.get(a) ?? 0) || (baseline.get(b) ?? 0) - (baseline.get(a) ?? 0),
  );
  const sum = (figures: Map<string, number>) => [...figures.values()].reduce((a, b) => a + b, 0);
  const rows = names
    .filter((name) => (app.get(name) ?? 0) >= 3 || (baseline.get(name) ?? 0) >= 3)
    .map(
      (name) => `| ${name} | ${(app.get(name) ?? 0).toFixed(0)} | ${(baseline.get(name) ?? 0).toFixed(0)} |`,
    );
  return [
    '| package | app µs/answer | baseline µs/answer |',
    '|---|---:|---:|',
    ...rows,
    `| all (rows under 3 µs included) | ${sum(app).toFixed(0)} | ${sum(baseline).toFixed(0)} |`,
  ].join('\n');
}

async function main(): Promise<void> {
  const duration = Number(process.env.BENCH_DURATION ?? 6);
  const databaseUrl = process.env.BENCH_DATABASE_URL?.trim() || undefined;
  const paths = process.argv.slice(2).filter((arg) => arg.startsWith('/'));
  const functionsAt = process.argv.indexOf('--functions');
  const topFunctions = functionsAt < 0 ? 0 : Number(process.argv[functionsAt + 1] ?? 30);
  const workDir = mkdtempSync(join(tmpdir(), 'svc-profile-'));
  const config = benchConfig(workDir, databaseUrl, { BCRYPT_COST: '4' });
  if (databaseUrl) await emptyDatabase(databaseUrl);
  const app = await startApp(config);
  await app.ready;
  await app.rechecked;
  const baseline = await startBaseline(config);
  const profiler = new Session();
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
  try {
    const seeded = await seed(app.origin, app.dataSource, { sessions: 10, approvedPlugins: 200 });
    const headers = { authorization: `Bearer ${seeded.reader.token}` };
    for (const path of paths.length > 0 ? paths : ['/api/v1/sessions/', '/api/v1/community-plugins/']) {
      // Alternating rounds, so a change in the machine's other load falls on both alike.
      const samples = [new Map<string, number>(), new Map<string, number>()];
      const functions = [new Map<string, number>(), new Map<string, number>()];
      const answers = [0, 0];
      for (let round = 0; round < ROUNDS; round++) {
        for (const [index, origin] of [app.origin, baseline.origin].entries()) {
          let etag: string | null = null;
          if (process.env.BENCH_IF_NONE_MATCH === 'on' && index === 0)
            etag = (await fetch(origin + path, { headers })).headers.get('etag');
          const spec = {
            title: path,
            origin,
            method: 'GET' as const,
            path,
            headers: etag ? { ...headers, 'if-none-match': etag } : headers,
            connections: 10,
            expectStatus: etag ? 304 : 200,
            expectBodyIncludes: etag ? '' : '"status":"success"',
          };
          await runLoad({ warmup: 0, specs: [{ ...spec, duration: 2 }] });
          await profiler.post('Profiler.start');
          const { runs } = await runLoad({ warmup: 0, specs: [{ ...spec, duration: duration / ROUNDS }] });
          const { profile } = await profiler.post('Profiler.stop');
          if (runs[0].failures > 0) throw new Error(`${origin}${path}: ${runs[0].failures} failed answers`);
          answers[index] += Object.values(runs[0].statuses).reduce((a, b) => a + b, 0);
          addSelfTime(
            [
              [samples[index], packageOf],
              [functions[index], functionOf],
            ],
            profile as Profile,
          );
        }
      }
      const figures = samples.map((totals, index) => perAnswer(totals, answers[index]));
      console.log(`\nGET ${path} — ${config.database.type}, CPU self time per answer\n`);
      console.log(table(figures[0], figures[1]));
      if (topFunctions > 0) {
        for (const [index, who] of ['app', 'baseline'].entries()) {
          console.log(`\nThe ${topFunctions} functions of most self time, ${who}, µs per answer\n`);
          const top = [...perAnswer(functions[index], answers[index])].sort((a, b) => b[1] - a[1]);
          for (const [name, micros] of top.slice(0, topFunctions))
            console.log(`${micros.toFixed(1).padStart(7)}  ${name}`);
        }
      }
    }
  } finally {
    profiler.disconnect();
    await baseline.close();
    await app.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
