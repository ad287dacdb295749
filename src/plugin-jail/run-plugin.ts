import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { startJail } from './jail-process';
import type { JailSettings, TestRunEvent, TestRunLimit, TestRunReport } from './types';

/** Bytes read of the report channel at most: the events are bounded inside, this bounds a runner gone wrong. */
const MAX_CHANNEL_BYTES = 8 * 1024 * 1024;
const MAX_LINE_SHOWN = 200;
const LIMITS: ReadonlySet<string> = new Set<TestRunLimit>([
  'cpu',
  'wall',
  'address-space',
  'file-size',
  'processes',
  'output',
]);
/** bwrap exits 128 + the signal that killed the runner; SIGXCPU (24) or SIGKILL (9) past the hard CPU limit. */
const CPU_EXIT_CODES = new Set([128 + 24, 128 + 9]);

interface RunnerResult {
  limit: string | null;
  return_value: string | null;
  exception: string | null;
  peak_memory_bytes: number;
  events_dropped: number;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A line the runner did not write (the plugin shares its process): kept as a flagged event. */
const forged = (line: string): TestRunEvent => ({
  event: 'runner.forged-line',
  args: [JSON.stringify(line.length > MAX_LINE_SHOWN ? `${line.slice(0, MAX_LINE_SHOWN)}...` : line)],
  flagged: true,
});

/**
 * Runs one plugin's bytes in the jail and makes its report. Rejects only when bwrap cannot be
 * started; whatever the plugin does ends in a report.
 */
export async function runPlugin(source: Buffer, settings: JailSettings): Promise<TestRunReport> {
  const token = randomBytes(24).toString('hex');
  const { limits } = settings;
  const started = process.hrtime.bigint();
  const jail = await startJail(settings, {
    script: 'runner.py',
    scriptArgs: [
      JSON.stringify({
        cpu_seconds: limits.cpuSeconds,
        address_space_bytes: limits.addressSpaceBytes,
        file_size_bytes: limits.fileSizeBytes,
        processes: limits.processes,
        max_events: settings.maxEvents,
        max_arg_chars: 200,
      }),
    ],
    stdin: `${token}\n`,
    plugin: source,
    wallMs: limits.wallSeconds * 1000,
  });
  const events: TestRunEvent[] = [];
  let result: RunnerResult | null = null;
  let channelBytes = 0;
  const lines = createInterface({ input: jail.channel, crlfDelay: Infinity });
  const read = new Promise<void>((resolve) => {
    lines.on('line', (line) => {
      channelBytes += line.length + 1;
      if (channelBytes > MAX_CHANNEL_BYTES || result !== null) return;
      const space = line.indexOf(' ');
      if (line.slice(0, space) !== token) {
        if (events.length < 2 * settings.maxEvents) events.push(forged(line));
        return;
      }
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line.slice(space + 1)) as Record<string, unknown>;
      } catch {
        events.push(forged(line));
        return;
      }
      if (message.kind === 'event') {
        events.push({
          event: String(message.event),
          args: Array.isArray(message.args) ? message.args.map(String) : [],
          flagged: message.flagged === true,
        });
      } else if (message.kind === 'result') {
        result = {
          limit: text(message.limit),
          return_value: text(message.return_value),
          exception: text(message.exception),
          peak_memory_bytes: Number(message.peak_memory_bytes) || 0,
          events_dropped: Number(message.events_dropped) || 0,
        };
      }
    });
    lines.once('close', resolve);
  });
  const [ended] = await Promise.all([jail.ended, read]);
  const duration_ms = Math.round(Number(process.hrtime.bigint() - started) / 1e6);
  const reported = result as RunnerResult | null;
  let limit: TestRunLimit | null = null;
  if (ended.wallKilled) limit = 'wall';
  else if (reported?.limit && LIMITS.has(reported.limit)) limit = reported.limit as TestRunLimit;
  else if (reported === null && ended.code !== null && CPU_EXIT_CODES.has(ended.code)) limit = 'cpu';
  const status =
    limit === 'wall' || limit === 'cpu'
      ? 'timed-out'
      : limit !== null || reported === null
        ? 'failed'
        : 'done';
  let exception = reported?.exception ?? null;
  if (reported === null && limit === null) {
    exception = `The runner ended before it reported (exit status ${ended.code ?? ended.signal})`;
  }
  return {
    status,
    limit,
    duration_ms,
    peak_memory_bytes: reported?.peak_memory_bytes ?? null,
    stdout: jail.stdout.text(),
    stderr: jail.stderr.text(),
    exception,
    return_value: reported?.return_value ?? null,
    events,
    events_dropped: reported?.events_dropped ?? 0,
    observed_events: [],
    observed_events_dropped: 0,
  };
}
