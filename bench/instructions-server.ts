/**
 * The server that bench/instructions.ts runs under callgrind: the app (with or without its
 * metrics) or the bare baseline, on a database the parent seeded, with the parent's settings
 * (SVC_BENCH_SETTINGS, JSON). Prints `listening <origin>` once it answers and its start-up work
 * is done (the re-check of the seeded plugins included), then serves until it is killed. A
 * `collect` line on its input collects all garbage (node --expose-gc) and prints `collected`: a
 * round starts with no garbage of the round before.
 */
import { createInterface } from 'node:readline';
import { loadConfig } from '../src/config/app-config';
import { startApp } from './app-server';
import { startBaseline } from './baseline-server';

async function main(): Promise<void> {
  const [kind, workDir] = process.argv.slice(2);
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line !== 'collect') return;
    (globalThis as { gc?: () => void }).gc?.();
    console.log('collected');
  });
  const settings = JSON.parse(process.env.SVC_BENCH_SETTINGS ?? '{}') as Record<string, string>;
  const config = loadConfig(settings, workDir);
  if (kind === 'baseline') {
    const baseline = await startBaseline(config);
    console.log(`listening ${baseline.origin}`);
    return;
  }
  const app = await startApp(config);
  await app.rechecked;
  console.log(`listening ${app.origin}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
