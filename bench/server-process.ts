/**
 * A bench server in a process of its own (bench/instructions-server.ts): the app, with or without
 * its metrics, or the bare baseline, on a database the parent seeded. Natively, or under a
 * wrapper such as valgrind's callgrind (`wrapper`: the command and its arguments before node's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../src/config/app-config';
import { emptyDatabase } from '../test/helpers/database';
import { benchSettings, startApp } from './app-server';
import { seed } from './seed';

/** `app again`: a second server of the app alike, whose difference from `app` is the bench's own noise. */
export type Variant = 'baseline' | 'app' | 'app again' | 'app with metrics';

const START_TIMEOUT_MS = 15 * 60_000;

/**
 * BENCH_TWIN_DIR: the twin runs the code of another checkout (its bench/instructions-server.ts
 * and src/, its own node_modules) on this one's seeded database, so two commits are compared
 * round by round on one database. A checkout older than this script needs this bench/ copied in.
 */
function serverScript(variant: Variant): string {
  const twinDir = process.env.BENCH_TWIN_DIR?.trim();
  if (variant === 'app again' && twinDir) return join(resolve(twinDir), 'bench', 'instructions-server.ts');
  return join(__dirname, 'instructions-server.ts');
}

export class ServerProcess {
  protected constructor(
    protected readonly child: ChildProcess,
    readonly origin: string,
    private readonly lines: ReturnType<typeof createInterface>,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  protected static async spawn(
    variant: Variant,
    workDir: string,
    settings: Record<string, string>,
    wrapper: string[] = [],
  ): Promise<{ child: ChildProcess; origin: string; lines: ReturnType<typeof createInterface> }> {
    const command = [
      ...wrapper,
      process.execPath,
      '--expose-gc',
      '--require',
      join(__dirname, '..', 'test', 'helpers', 'ts-register.js'),
      serverScript(variant),
      variant === 'baseline' ? 'baseline' : 'app',
      workDir,
    ];
    const child = spawn(command[0], command.slice(1), {
      env: { ...process.env, SVC_BENCH_SETTINGS: JSON.stringify(settings) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
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
        reject(new Error(`${command[0]} could not be started: ${error.message}`));
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${variant} exited (${code}) before listening:\n${stderr.join('').slice(-3000)}`));
      });
    });
    return { child, origin, lines };
  }

  static async start(
    variant: Variant,
    workDir: string,
    settings: Record<string, string>,
  ): Promise<ServerProcess> {
    const { child, origin, lines } = await ServerProcess.spawn(variant, workDir, settings);
    return new ServerProcess(child, origin, lines);
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

  /**
   * CPU time the kernel has run the process for, every thread of it (the garbage collector's and
   * libuv's included), in nanoseconds: the first field of each thread's schedstat.
   */
  cpuNanoseconds(): number {
    const tasks = `/proc/${this.pid}/task`;
    let total = 0;
    for (const task of readdirSync(tasks)) {
      try {
        total += Number(readFileSync(join(tasks, task, 'schedstat'), 'utf8').split(' ')[0]);
      } catch {
        // A thread that ended between the listing and the read: its time is gone with it.
      }
    }
    return total;
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/**
 * The settings of the servers measured and the seeded reader's token: the app seeded once
 * (natively, in this process) with 10 sessions and 200 approved plugins, on SQLite in `workDir`
 * or the emptied `databaseUrl`. One secret for the seeding app and the servers: the token stays valid.
 */
export async function seededSettings(
  workDir: string,
  databaseUrl: string | undefined,
): Promise<{ settings: Record<string, string>; token: string }> {
  const settings = benchSettings(workDir, databaseUrl, { BCRYPT_COST: '4' });
  delete settings.METRICS_PORT;
  if (databaseUrl) await emptyDatabase(databaseUrl);
  const app = await startApp(loadConfig(settings, workDir));
  await app.ready;
  const seeded = await seed(app.origin, app.dataSource, {
    sessions: 10,
    approvedPlugins: 200,
    bcryptCost: 4,
  });
  await app.close();
  return { settings, token: seeded.reader.token };
}

const SHORT_NAMES: Record<Variant, string> = {
  baseline: 'baseline',
  app: 'app',
  'app again': 'twin',
  'app with metrics': 'metrics',
};

/** The servers BENCH_VARIANTS names (`baseline`, `app`, `twin`, `metrics`), each with its settings. */
export function chosenVariants(
  settings: Record<string, string>,
  fallback: string,
): Array<[Variant, Record<string, string>]> {
  const chosen = (process.env.BENCH_VARIANTS ?? fallback).split(',').map((each) => each.trim());
  return (
    [
      ['baseline', settings],
      ['app', settings],
      ['app again', settings],
      ['app with metrics', { ...settings, METRICS_PORT: '0' }],
    ] as Array<[Variant, Record<string, string>]>
  ).filter(([variant]) => chosen.includes(SHORT_NAMES[variant]));
}
