import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Plugins that made the old in-process report lie, one technique each (test/fixtures/test-runs/lying). */
export const LYING_DIR = join(__dirname, '..', 'fixtures', 'test-runs', 'lying');

/** A runaway plugin that floods the runner's channel without a newline (test/fixtures/test-runs/runaway). */
export const CHANNEL_FLOOD = readFileSync(
  join(__dirname, '..', 'fixtures', 'test-runs', 'runaway', 'channel_flood.py'),
);

export interface LyingPlugin {
  name: string;
  file: string;
  source: Buffer;
  /**
   * What must be among the flagged observed events: the event, and its first argument when
   * given. `ifRun`: a runner that never calls the plugin's object (its `__str__`, its `flush`)
   * leaves nothing to see; if the action happens all the same, it is flagged.
   */
  expect: { event: string; arg: string | null; ifRun: boolean };
}

/** Each fixture, with the expectation its first line states (`# expect[-if-run]: <event> [<first argument>]`). */
export function lyingPlugins(): LyingPlugin[] {
  return readdirSync(LYING_DIR)
    .filter((name) => name.endsWith('.py'))
    .sort()
    .map((name) => {
      const file = join(LYING_DIR, name);
      const source = readFileSync(file);
      const match = /^# expect(-if-run)?: (\S+)(?: (\S+))?\n/.exec(source.toString('utf8'));
      if (!match) throw new Error(`${name}: its first line must be # expect[-if-run]: <event> [<argument>]`);
      return {
        name,
        file,
        source,
        expect: { event: match[2], arg: match[3] ?? null, ifRun: match[1] !== undefined },
      };
    });
}

/** True when the report's observed events hold the expected one, flagged (or, `ifRun`, none unflagged). */
export function showsExpected(
  observed: Array<{ event: string; args: string[]; flagged: boolean }>,
  expected: LyingPlugin['expect'],
): boolean {
  const matching = observed.filter(
    (event) => event.event === expected.event && (expected.arg === null || event.args[0] === expected.arg),
  );
  return expected.ifRun ? matching.every((event) => event.flagged) : matching.some((event) => event.flagged);
}
