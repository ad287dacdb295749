import { randomBytes } from 'node:crypto';
import { boundedLines } from './bounded-lines';
import { startJail } from './jail-process';
import { testimonyMissing } from './testimony';
import { type Observation, TraceObserver } from './trace-observer';
import type { JailSettings, TestRunEvent, TestRunLimit, TestRunReport } from './types';

/** Bytes read of the report channel at most, and of one line of it: the runner bounds its own lines far below. */
const MAX_CHANNEL_BYTES = 8 * 1024 * 1024;
const MAX_CHANNEL_LINE = 256 * 1024;
const MAX_LINE_SHOWN = 200;
const NOT_STARTED = 'The tracer did not see the plugin start';
/** Limits the runner may name (its testimony, which can only fail a run, never pass it). */
const RUNNER_LIMITS: ReadonlySet<string> = new Set<TestRunLimit>([
  'cpu',
  'address-space',
  'file-size',
  'processes',
]);

interface RunnerResult {
  limit: string | null;
  return_value: string | null;
  exception: string | null;
  events_dropped: number;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const shown = (line: string) =>
  JSON.stringify(line.length > MAX_LINE_SHOWN ? `${line.slice(0, MAX_LINE_SHOWN)}...` : line);

/** A line the runner did not write (the plugin shares its process): kept as a flagged event. */
const forged = (line: string): TestRunEvent => ({
  event: 'runner.forged-line',
  args: [shown(line)],
  flagged: true,
});

/**
 * A run the server may pause (SIGSTOP to the plugin's process, seen from outside its PID
 * namespace, so the observer knows it for the server's) and resume; its wall clock waits while
 * paused (WallClock). Both do nothing before the plugin starts or after it ended.
 */
export interface PausableRun {
  pause(): void;
  resume(): void;
}

export interface RunHooks {
  /** Told when the plugin's code starts, with the run to pause and resume (test-run-pacer.ts). */
  onRunning?: (run: PausableRun) => void;
}

/**
 * Runs one plugin's bytes in the jail and makes its report. Rejects only when the jail cannot be
 * started; whatever the plugin does ends in a report. The report's facts (observed_events, the
 * status, the limit, the peak memory) come from outside the plugin's process: the tracer's view and the exit
 * the kernel gave. The runner's channel is testimony: it adds context and can fail a run, never
 * make one `done`.
 */
export async function runPlugin(
  source: Buffer,
  settings: JailSettings,
  hooks: RunHooks = {},
): Promise<TestRunReport> {
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
  let outputLimit = false;
  const overflow = () => {
    outputLimit = true;
    jail.kill();
  };
  let pausedPid: number | null = null;
  const run: PausableRun = {
    pause() {
      const pid = observer.livePluginPid;
      if (pausedPid !== null || pid === null) return;
      try {
        process.kill(pid, 'SIGSTOP');
      } catch {
        return; // Gone: nothing to pause.
      }
      pausedPid = pid;
      jail.wall.pause();
    },
    resume() {
      if (pausedPid === null) return;
      const pid = pausedPid;
      pausedPid = null;
      jail.wall.resume();
      // Only while the tracer has not seen it end: its pid may be another process's after.
      if (observer.livePluginPid === pid) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Gone meanwhile.
        }
      }
    },
  };
  const observer = new TraceObserver(settings.maxEvents, jail.kill, () => hooks.onRunning?.(run));
  const traced = observer.read(jail.trace, overflow);
  const events: TestRunEvent[] = [];
  let result: RunnerResult | null = null;
  const testimony = boundedLines(
    jail.channel,
    { maxBytes: MAX_CHANNEL_BYTES, maxLine: MAX_CHANNEL_LINE },
    (line) => {
      if (result !== null) return;
      const space = line.indexOf(' ');
      let message: Record<string, unknown> | null = null;
      if (space > 0 && line.slice(0, space) === token) {
        try {
          message = JSON.parse(line.slice(space + 1)) as Record<string, unknown>;
        } catch {
          message = null;
        }
      }
      if (message === null) {
        if (events.length < 2 * settings.maxEvents) events.push(forged(line));
      } else if (message.kind === 'event') {
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
          events_dropped: Number(message.events_dropped) || 0,
        };
      }
    },
    overflow,
  );
  const [ended, usage] = await Promise.all([jail.ended, jail.usage, traced, testimony]);
  const duration_ms = Math.round(Number(process.hrtime.bigint() - started) / 1e6);
  const observed = observer.result();
  const reported = result as RunnerResult | null;
  const { status, limit, problem } = verdict(
    observed,
    reported,
    ended.wallKilled ? Math.round(jail.wall.pausedMs) : null,
    outputLimit,
  );
  const observedEvents: TestRunEvent[] = observed.events.map(({ event, args, flagged }) => ({
    event,
    args,
    flagged,
  }));
  observedEvents.push(...testimonyMissing(observed.events, events));
  if (observed.anomalies.length > 0 || problem === NOT_STARTED) {
    const what = observed.anomalies.length > 0 ? observed.anomalies : [NOT_STARTED];
    observedEvents.push({ event: 'server.tracer-lost', args: what.map(shown), flagged: true });
  }
  return {
    status,
    limit,
    duration_ms,
    peak_memory_bytes: usage?.peakMemoryBytes ?? null,
    stdout: jail.stdout.text(),
    stderr: jail.stderr.text(),
    exception: problem ?? reported?.exception ?? null,
    return_value: reported?.return_value ?? null,
    events,
    events_dropped: reported?.events_dropped ?? 0,
    observed_events: observedEvents,
    observed_events_dropped: observed.dropped,
  };
}

/**
 * The status and limit, from what the server and the kernel saw, in this order: the wall clock,
 * the output bounds, a call the filter refused (the server ended the run there), the plugin
 * process's end as the tracer saw it. `done`
 * only when the tracer saw the plugin start and exit 0 and the runner reported; anything the
 * tracer could not account for fails the run.
 */
function verdict(
  observed: Observation,
  reported: RunnerResult | null,
  wallKilledPausedMs: number | null,
  outputLimit: boolean,
): { status: TestRunReport['status']; limit: TestRunLimit | null; problem: string | null } {
  if (wallKilledPausedMs !== null) {
    // A run the server paused for a busy API may reach its wall limit for that: the reviewer is told.
    const problem =
      wallKilledPausedMs > 0
        ? `Paused ${wallKilledPausedMs} ms while the server was busy with other requests`
        : null;
    return { status: 'timed-out', limit: 'wall', problem };
  }
  if (outputLimit) {
    return {
      status: 'failed',
      limit: 'output',
      problem: 'The run wrote more than its channel or trace may hold',
    };
  }
  if (observed.processDenied) {
    return {
      status: 'failed',
      limit: 'processes',
      problem: 'The jail refused a second process: one process per run',
    };
  }
  if (observed.refused !== null) {
    return { status: 'failed', limit: null, problem: `The jail refused the system call ${observed.refused}` };
  }
  // Past the CPU limit the kernel kills the process (SIGKILL at the hard limit): the jail's
  // PID 1 ignores SIGXCPU unless it handles it.
  if (observed.pluginEnd === 'killed by SIGKILL' || observed.pluginEnd === 'killed by SIGXCPU') {
    return { status: 'timed-out', limit: 'cpu', problem: null };
  }
  const claimed =
    reported?.limit && RUNNER_LIMITS.has(reported.limit) ? (reported.limit as TestRunLimit) : null;
  if (claimed !== null)
    return { status: claimed === 'cpu' ? 'timed-out' : 'failed', limit: claimed, problem: null };
  if (observed.anomalies.length > 0) {
    return {
      status: 'failed',
      limit: null,
      problem: `The tracer did not account for the run: ${observed.anomalies[0]}`,
    };
  }
  if (!observed.pluginStarted) {
    // The runner's compile of the plugin failed (a syntax error): its code never ran, and the
    // runner's traceback says why; otherwise nothing accounts for the run.
    return { status: 'failed', limit: null, problem: reported?.exception ? null : NOT_STARTED };
  }
  if (observed.pluginEnd !== 'exited with 0') {
    return {
      status: 'failed',
      limit: null,
      problem: `The plugin's process ${observed.pluginEnd ?? 'was not seen to end'}`,
    };
  }
  if (reported === null) {
    return { status: 'failed', limit: null, problem: 'The runner ended before it reported' };
  }
  return { status: 'done', limit: null, problem: null };
}
