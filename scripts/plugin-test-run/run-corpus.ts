/**
 * Runs every plugin under the given directories through the test-run jail, one at a time, and
 * checks that none reached the host. Not part of `npm test` (hundreds of runs); the proof behind
 * docs/plugin-test-run.md:
 *
 *   npx tsx scripts/plugin-test-run/run-corpus.ts test/fixtures/plugins/hostile
 *   # the original framework's plugins: fetch github:owtf/owtf (never commit it), then
 *   mkdir -p /tmp/owtf && git --git-dir=/work/.mirror/owtf+owtf/repo archive HEAD owtf/plugins | tar -x -C /tmp/owtf
 *   npx tsx scripts/plugin-test-run/run-corpus.ts /tmp/owtf
 *
 * A host effect is a new `PWNED*` or `.pth` entry in the working directory, $HOME, the temporary
 * directory or the interpreter's site directories, or this process's canary variable seen in a
 * report. Prints the statuses, how many runs stopped at an import (ImportError), the runs with
 * flagged events (each with its flagged event names) and every host effect; exits 1 on any host
 * effect or a run that made no report.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { checkJail, runPlugin, type JailSettings } from '../../src/plugin-jail';

const CANARY = `corpus-canary-${process.pid}-${Date.now()}`;
process.env.SVC_CORPUS_CANARY = CANARY;

const settings: JailSettings = {
  bwrapPath: process.env.PLUGIN_TEST_RUN_BWRAP ?? '/usr/bin/bwrap',
  stracePath: process.env.PLUGIN_TEST_RUN_STRACE ?? '/usr/bin/strace',
  pythonPath: '/usr/bin/python3',
  limits: {
    cpuSeconds: 5,
    wallSeconds: 15,
    addressSpaceBytes: 512 << 20,
    fileSizeBytes: 16 << 20,
    processes: 16,
    cpuPriority: 'normal',
  },
  maxEvents: 2000,
  maxOutputBytes: 64 * 1024,
};

function plugins(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) return plugins(file);
      return name.endsWith('.py') && name !== '__init__.py' && name !== 'base.py' ? [file] : [];
    })
    .sort();
}

const siteDirs = execFileSync('/usr/bin/python3', [
  '-c',
  'import site; print("\\n".join(site.getsitepackages()))',
])
  .toString()
  .trim()
  .split('\n');
const watched = [process.cwd(), homedir(), tmpdir(), ...siteDirs];
const suspicious = (name: string) => /^pwned/i.test(name) || name.endsWith('.pth');

function snapshot(): Set<string> {
  const seen = new Set<string>();
  for (const dir of watched) {
    try {
      for (const name of readdirSync(dir)) if (suspicious(name)) seen.add(path.join(dir, name));
    } catch {
      // Not there on this machine.
    }
  }
  return seen;
}

async function main(): Promise<void> {
  const dirs = process.argv.slice(2);
  if (dirs.length === 0) {
    process.stderr.write('usage: run-corpus.ts <directory>...\n');
    process.exit(2);
  }
  const problem = await checkJail(settings);
  if (problem !== null) throw new Error(problem);
  const before = snapshot();
  const statuses = new Map<string, number>();
  const effects: string[] = [];
  const flaggedRuns: string[] = [];
  const importStops: string[] = [];
  /** Flagged by the plugin's own testimony only: what the kernel does not see (introspection). */
  const testimonyOnly: string[] = [];
  let total = 0;
  const started = Date.now();
  for (const file of dirs.flatMap(plugins)) {
    total += 1;
    const report = await runPlugin(readFileSync(file), settings);
    const key = report.limit ? `${report.status} (${report.limit})` : report.status;
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
    const names = (events: typeof report.events) => [
      ...new Set(events.filter((event) => event.flagged).map((event) => event.event)),
    ];
    const seen = names(report.observed_events);
    const said = names(report.events);
    if (seen.length > 0 || said.length > 0) {
      flaggedRuns.push(`${file}: seen ${seen.join(', ') || '-'}; testimony ${said.join(', ') || '-'}`);
    }
    if (seen.length === 0 && said.length > 0) testimonyOnly.push(file);
    const stop = /\b(ModuleNotFoundError|ImportError): .*/.exec(report.exception ?? '');
    if (stop) importStops.push(`${file}: ${stop[0]}`);
    if (JSON.stringify(report).includes(CANARY)) effects.push(`${file}: the canary is in its report`);
    for (const entry of snapshot()) {
      if (!before.has(entry)) {
        effects.push(`${file}: ${entry} appeared on the host`);
        before.add(entry);
      }
    }
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    `${total} plugins run in ${seconds} s; ${total - importStops.length} ran past their imports, ` +
      `${importStops.length} stopped at one; ${flaggedRuns.length} with flagged events, ` +
      `${testimonyOnly.length} of them flagged by the testimony alone\n`,
  );
  for (const [status, count] of [...statuses].sort()) process.stdout.write(`  ${status}: ${count}\n`);
  for (const run of flaggedRuns) process.stdout.write(`FLAGGED ${run}\n`);
  for (const run of importStops) process.stdout.write(`IMPORT STOP ${run}\n`);
  for (const effect of effects) process.stdout.write(`HOST EFFECT ${effect}\n`);
  process.stdout.write(`${effects.length} host effect(s)\n`);
  if (effects.length > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
