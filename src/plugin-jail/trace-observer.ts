import path from 'node:path';
import type { Readable } from 'node:stream';
import { boundedLines } from './bounded-lines';
import {
  type CallResult,
  descriptorPath,
  FIRST_PROCESS,
  parseCall,
  parseTraceLine,
  stringArgument,
} from './trace-syntax';
import type { TestRunEvent } from './types';

/**
 * What the kernel saw the jailed processes do, from strace's lines (trace-syntax.ts): the
 * facts of a report. Everything before the runner's look at PLUGIN_STARTS is the launcher's,
 * bwrap's set-up and the runner's own; from there on the process that looked, and every process
 * or thread not seen before (the plugin's threads), is the plugin's; bwrap outside the PID
 * namespace, which only waits, is not. Kept: what a reviewer must look at (flagged), thread
 * starts and the plugin process's end; at most `maxEvents`, the rest counted.
 */

/** The runner opens this path (it does not exist) just before the plugin's code runs. */
export const PLUGIN_STARTS = '/runner/plugin-starts';
const WORK = '/work';
/** Read without a flag: the working directory, the interpreter's files, the plugin and runner, harmless devices. */
const QUIET_READS = [
  WORK,
  '/usr',
  '/plugin',
  '/runner',
  '/dev/null',
  '/dev/zero',
  '/dev/urandom',
  '/dev/random',
];
/** The C library reads the time zone itself (`time.localtime`); the jail has no /etc, so it is not there. */
const QUIET_MISSING = new Set(['/etc/localtime']);
const WRITE_FLAGS = /\bO_(WRONLY|RDWR|CREAT|TRUNC|APPEND)\b/;
/** Code written to a file and imported later, or a path entry: a write of these is flagged anywhere. */
const CODE_SUFFIXES = ['.py', '.pyc', '.pth', '.so'];
const MAX_ARG_CHARS = 200;
const TRACE_BOUNDS = { maxBytes: 16 * 1024 * 1024, maxLine: 256 * 1024 };

/** Calls that change the file system at a path: flagged outside the working directory. */
const PATH_CHANGES: Record<string, Array<[dirArg: number | null, pathArg: number]>> = {
  unlink: [[null, 0]],
  rmdir: [[null, 0]],
  mkdir: [[null, 0]],
  mknod: [[null, 0]],
  chmod: [[null, 0]],
  chown: [[null, 0]],
  lchown: [[null, 0]],
  truncate: [[null, 0]],
  utime: [[null, 0]],
  utimes: [[null, 0]],
  setxattr: [[null, 0]],
  lsetxattr: [[null, 0]],
  removexattr: [[null, 0]],
  lremovexattr: [[null, 0]],
  rename: [
    [null, 0],
    [null, 1],
  ],
  link: [
    [null, 0],
    [null, 1],
  ],
  symlink: [[null, 1]],
  unlinkat: [[0, 1]],
  mkdirat: [[0, 1]],
  mknodat: [[0, 1]],
  fchmodat: [[0, 1]],
  fchownat: [[0, 1]],
  utimensat: [[0, 1]],
  futimesat: [[0, 1]],
  renameat: [
    [0, 1],
    [2, 3],
  ],
  renameat2: [
    [0, 1],
    [2, 3],
  ],
  linkat: [
    [0, 1],
    [2, 3],
  ],
  symlinkat: [[1, 2]],
};
const OPENS = new Set(['open', 'openat', 'openat2', 'creat']);
const DESCRIPTOR_CHANGES = new Set(['fchmod', 'fchown', 'ftruncate', 'fsetxattr', 'fremovexattr']);
const NETWORK = new Set([
  'socket',
  'socketpair',
  'connect',
  'bind',
  'listen',
  'accept',
  'accept4',
  'sendto',
  'sendmsg',
  'sendmmsg',
]);
const DESCRIPTOR_TRICKS = new Set(['dup', 'dup2', 'dup3']);
const SIGNALS_SENT = new Set([
  'kill',
  'tkill',
  'tgkill',
  'rt_sigqueueinfo',
  'rt_tgsigqueueinfo',
  'pidfd_send_signal',
]);
/** The calls the process filter traps that would have made a process (process-filter.ts). */
const PROCESS_CREATION = new Set(['clone', 'fork', 'vfork']);
const PAUSE_SIGNALS = new Set(['SIGSTOP', 'SIGCONT']);

/** The system calls traced (strace's names): CPython's audit events name most of them, the kernel all. */
export const TRACED_CALLS: readonly string[] = [
  ...OPENS,
  'execve',
  'execveat',
  'clone',
  ...NETWORK,
  ...DESCRIPTOR_TRICKS,
  'fcntl',
  ...SIGNALS_SENT,
  'prlimit64',
  'setrlimit',
  'chdir',
  'fchdir',
  ...Object.keys(PATH_CHANGES),
  ...DESCRIPTOR_CHANGES,
];

/** Which kind of action an observed event is, for matching it with the testimony (run-plugin.ts). */
export type ObservedKind = 'open' | 'network' | 'execute' | 'process' | 'file-change' | 'signal' | 'other';

export interface ObservedEvent extends TestRunEvent {
  kind: ObservedKind;
  /** For opens and file changes: the path the kernel resolved (or the one asked for, when the call failed). */
  path?: string;
}

export interface Observation {
  events: ObservedEvent[];
  dropped: number;
  /** True once the runner's look at PLUGIN_STARTS was seen: the plugin's code ran under the tracer. */
  pluginStarted: boolean;
  /** True when the jail refused to create a process. */
  processDenied: boolean;
  /** The first call the jail refused (process-filter.ts), if any: the run ends there. */
  refused: string | null;
  /** How the plugin's process ended, as the kernel told the tracer: `exited with 0`, `killed by SIGKILL`. */
  pluginEnd: string | null;
  /** Lines the tracer wrote that are not a trace (its own complaints) or that follow no form of it. */
  anomalies: string[];
}

const inside = (file: string, roots: readonly string[]) =>
  roots.some((root) => file === root || file.startsWith(`${root}/`));
const clip = (text: string) => (text.length > MAX_ARG_CHARS ? `${text.slice(0, MAX_ARG_CHARS)}...` : text);
const shownResult = (result: CallResult) =>
  result.value === null
    ? '= ?'
    : result.error !== null
      ? `= -1 ${result.error}`
      : `= ${result.value}${result.path !== null ? ` <${result.path}>` : ''}`;

export class TraceObserver {
  private readonly events: ObservedEvent[] = [];
  private dropped = 0;
  /** The processes seen before the plugin started: the launcher's (bwrap outside) and the runner's. */
  private readonly before = new Set<number>();
  private pluginPid: number | null = null;
  private started = false;
  private denied = false;
  private refused: string | null = null;
  private end: string | null = null;
  private readonly anomalies: string[] = [];
  /** The plugin's working directory (one process: the filter denies another), for relative paths. */
  private cwd = WORK;
  /** A call strace showed cut by another process's line (`<unfinished ...>`), by process. */
  private readonly pending = new Map<number, string>();

  /**
   * `onRefused` is told of the first call the jail refused: the caller ends the run there.
   * `onStarted` is told when the plugin's code starts.
   */
  constructor(
    private readonly maxEvents: number,
    private readonly onRefused: (call: string) => void = () => undefined,
    private readonly onStarted: () => void = () => undefined,
  ) {}

  /** The plugin's process (its host pid) while it runs: null before it started and once it ended. */
  get livePluginPid(): number | null {
    return this.end === null ? this.pluginPid : null;
  }

  /**
   * Reads the tracer's output into this observer, bounded: an ordinary run writes some hundred
   * kilobytes (strace cuts each string at 96 characters), and the server reads it on its event
   * loop, so past 16 MiB, or 256 KiB without a newline, `overflow` ends the run.
   */
  read(trace: Readable, overflow: () => void): Promise<void> {
    return boundedLines(trace, TRACE_BOUNDS, (line) => this.line(line), overflow);
  }

  line(text: string): void {
    const line = parseTraceLine(text);
    if (line === null) {
      this.anomaly(`unreadable trace line: ${clip(text)}`);
      return;
    }
    if (line.kind === 'tracer') {
      this.anomaly(clip(line.text));
      return;
    }
    if (!this.started) this.before.add(line.pid);
    // Unprefixed, strace traces one process alone: the launcher, which outlives the plugin's.
    // While the plugin runs, such a line would be the plugin's own, unattributed.
    else if (line.pid === FIRST_PROCESS && this.end === null)
      this.anomaly(`a line of no process: ${clip(text)}`);
    if (line.kind === 'unfinished') {
      this.pending.set(line.pid, `${line.name}(${line.text}`);
      return;
    }
    if (line.kind === 'resumed') {
      const start = this.pending.get(line.pid);
      this.pending.delete(line.pid);
      const whole = start !== undefined ? parseCall(`${start}${line.text}`) : null;
      if (whole === null) this.anomaly(`unreadable trace line: ${clip(text)}`);
      else this.call(line.pid, whole.name, whole.args, whole.result);
      return;
    }
    if (line.kind === 'call') {
      this.call(line.pid, line.name, line.args, line.result);
      return;
    }
    if (!this.plugins(line.pid) || line.kind === 'stopped') return;
    if (line.kind === 'signal') this.signal(line.signal, line.info);
    else if (line.pid === this.pluginPid) {
      this.end = line.signal !== null ? `killed by ${line.signal}` : `exited with ${line.code}`;
      this.keep({ event: 'kernel.exit', args: [this.end], flagged: false, kind: 'other' });
    }
  }

  result(): Observation {
    return {
      events: this.events,
      dropped: this.dropped,
      pluginStarted: this.started,
      processDenied: this.denied,
      refused: this.refused,
      pluginEnd: this.end,
      anomalies: this.anomalies,
    };
  }

  private anomaly(text: string): void {
    if (this.anomalies.length < 20) this.anomalies.push(text);
  }

  private keep(event: ObservedEvent): void {
    if (this.events.length < this.maxEvents) this.events.push(event);
    else this.dropped += 1;
  }

  /** True for a line of the plugin's: after it started, its process's, or a process or thread new since. */
  private plugins(pid: number): boolean {
    return this.started && (pid === this.pluginPid || !this.before.has(pid));
  }

  private call(pid: number, name: string, args: string[], result: CallResult): void {
    if (!this.started) {
      if (
        pid !== FIRST_PROCESS &&
        name.startsWith('open') &&
        this.openedPath(name, args, result) === PLUGIN_STARTS
      ) {
        this.started = true;
        this.pluginPid = pid;
        this.onStarted();
      }
      return;
    }
    if (!this.plugins(pid)) return;
    const shown = shownResult(result);
    const event = (kind: ObservedKind, flagged: boolean, shownArgs: string[], file?: string) =>
      this.keep({
        event: `kernel.${name}`,
        args: [...shownArgs.map(clip), shown],
        flagged,
        kind,
        ...(file !== undefined ? { path: file } : {}),
      });
    if (OPENS.has(name)) {
      const file = this.openedPath(name, args, result);
      const flags = name === 'creat' ? 'O_CREAT|O_WRONLY|O_TRUNC' : this.openFlags(name, args);
      if (file === null) return event('open', true, args);
      if (this.openFlagged(file, flags, result)) event('open', true, [file, flags], file);
    } else if (name === 'execve' || name === 'execveat') {
      event('execute', true, args.slice(0, 2));
    } else if (name === 'clone') {
      if (/\bCLONE_THREAD\b/.test(args.join(','))) event('other', false, ['thread']);
      else event('process', true, args);
    } else if (NETWORK.has(name)) {
      event('network', true, args);
    } else if (DESCRIPTOR_TRICKS.has(name) || (name === 'fcntl' && /\bF_DUPFD/.test(args[1] ?? ''))) {
      event('other', true, args);
    } else if (SIGNALS_SENT.has(name)) {
      event('signal', true, args);
    } else if (name === 'prlimit64' || name === 'setrlimit') {
      if (name === 'setrlimit' || (args[2] !== undefined && args[2] !== 'NULL')) event('other', true, args);
    } else if (name === 'chdir' || name === 'fchdir') {
      if (result.error === null) this.changeDirectory(name, args);
    } else if (name in PATH_CHANGES) {
      const files = PATH_CHANGES[name].map(([dirArg, pathArg]) => this.resolve(args, dirArg, pathArg));
      const target = name === 'symlink' || name === 'symlinkat' ? this.symlinkTarget(args, files[0]) : null;
      const outside = [...files, ...(target !== null ? [target] : [])].some(
        (file) => file === null || !inside(file, [WORK]),
      );
      if (outside) event('file-change', true, args, files[0] ?? undefined);
    } else if (DESCRIPTOR_CHANGES.has(name)) {
      const file = descriptorPath(args[0]);
      if (file === null || !inside(file, [WORK])) event('file-change', true, args, file ?? undefined);
    }
  }

  private signal(signal: string, info: string): void {
    // Sent from outside the jail's PID namespace (no pid there): the server pausing the run
    // (run-plugin.ts), not the plugin's doing.
    if (PAUSE_SIGNALS.has(signal) && /\bsi_code=SI_USER\b/.test(info) && /\bsi_pid=0\b/.test(info)) return;
    if (signal === 'SIGSYS' && /\bsi_code=SYS_SECCOMP\b/.test(info)) {
      const call = /\bsi_syscall=__NR_([a-z_0-9]+)/.exec(info)?.[1] ?? 'unknown';
      const creation = PROCESS_CREATION.has(call);
      if (creation) this.denied = true;
      const first = this.refused === null;
      this.refused ??= call;
      this.keep({
        event: 'kernel.denied',
        args: [call, creation ? 'a new process: one process per run' : 'refused by the jail'],
        flagged: true,
        kind: creation ? 'process' : 'other',
      });
      // A refused call returns what the filter left in a register: no plugin goes on sensibly.
      if (first) this.onRefused(call);
      return;
    }
    this.keep({ event: 'kernel.signal', args: [signal, clip(info)], flagged: false, kind: 'other' });
  }

  /** What an open opened: the kernel's path of the descriptor returned, else the path asked for. */
  private openedPath(name: string, args: string[], result: CallResult): string | null {
    if (result.path !== null && result.error === null) return result.path;
    return name === 'openat' || name === 'openat2' ? this.resolve(args, 0, 1) : this.resolve(args, null, 0);
  }

  private openFlags(name: string, args: string[]): string {
    if (name === 'openat2') return /flags=([A-Z_0-9|x]+)/.exec(args[2] ?? '')?.[1] ?? args[2] ?? '';
    return (name === 'openat' ? args[2] : args[1]) ?? '';
  }

  private openFlagged(file: string, flags: string, result: CallResult): boolean {
    if (WRITE_FLAGS.test(flags)) {
      if (file === '/dev/null') return false;
      return CODE_SUFFIXES.some((suffix) => file.endsWith(suffix)) || !inside(file, [WORK]);
    }
    if (inside(file, QUIET_READS)) return false;
    return !(result.error === 'ENOENT' && QUIET_MISSING.has(file));
  }

  /** A path argument made absolute: against its directory descriptor's path, or the working directory. */
  private resolve(args: string[], dirArg: number | null, pathArg: number): string | null {
    const file = stringArgument(args[pathArg]);
    if (file === null) return null;
    if (file.startsWith('/')) return path.posix.normalize(file);
    // strace shows a directory descriptor's path, AT_FDCWD's included (`AT_FDCWD</work>`);
    // calls without one are relative to the working directory followed here.
    const base =
      dirArg === null
        ? this.cwd
        : (descriptorPath(args[dirArg]) ?? (args[dirArg] === 'AT_FDCWD' ? this.cwd : null));
    return base === null ? null : path.posix.join(base, file);
  }

  private symlinkTarget(args: string[], link: string | null): string | null {
    const target = stringArgument(args[0]);
    if (target === null || link === null) return null;
    return target.startsWith('/')
      ? path.posix.normalize(target)
      : path.posix.join(path.posix.dirname(link), target);
  }

  private changeDirectory(name: string, args: string[]): void {
    const next = name === 'chdir' ? this.resolve(args, null, 0) : descriptorPath(args[0]);
    if (next !== null) this.cwd = next;
  }
}
