import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { companionsOf, filterFdOf, jailCommand, jailStderrFdOf, PYTHON_DIR, usageFdOf } from './jail-command';
import { processFilter } from './process-filter';
import type { JailSettings } from './types';

/** Bytes kept of a stream, however much more comes (the rest is read and counted, so the writer never blocks). */
export class BoundedText {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private extra = 0;

  constructor(
    stream: Readable,
    private readonly max: number,
  ) {
    stream.on('data', (chunk: Buffer) => {
      const room = this.max - this.kept;
      if (room > 0) {
        const part = chunk.subarray(0, room);
        this.chunks.push(part);
        this.kept += part.length;
      }
      this.extra += Math.max(0, chunk.length - Math.max(room, 0));
    });
  }

  text(): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    return this.extra > 0 ? `${text}\n[${this.extra} more bytes not kept]` : text;
  }
}

export interface JailProcess {
  child: ChildProcess;
  stdout: BoundedText;
  stderr: BoundedText;
  /** Fd 3 inside: the runner's report channel. */
  channel: Readable;
  /** The tracer's lines: strace's view of every process of the jail (trace-observer.ts). */
  trace: Readable;
  /** The kernel's account of the whole jail once it ended, from the launcher outside it; null when the launcher was killed first. */
  usage: Promise<JailUsage | null>;
  /** The wall-clock limit, which the time the server pauses the run does not count against (up to as long again). */
  wall: WallClock;
  /** Ends every process of the jail now (the wall clock does the same). */
  kill: () => void;
  /** Resolves when the tracer and every process of the jail are gone: strace's exit code or signal, and whether the wall clock ended it. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; wallKilled: boolean }>;
}

/**
 * The wall-clock limit of a run, held while the server pauses the run (run-plugin.ts): paused
 * time does not count, up to `limitMs` more in all, so every run still ends within twice its
 * limit.
 */
export class WallClock {
  private timer: NodeJS.Timeout;
  private left: number;
  private pauseCredit: number;
  private since = performance.now();
  private paused = false;
  /** The time the run spent paused, in all. */
  pausedMs = 0;

  constructor(
    limitMs: number,
    private readonly expire: () => void,
  ) {
    this.left = limitMs;
    this.pauseCredit = limitMs;
    this.timer = setTimeout(expire, limitMs);
  }

  pause(): void {
    if (this.paused) return;
    const now = performance.now();
    this.left -= now - this.since;
    [this.paused, this.since] = [true, now];
    this.restart(this.left + this.pauseCredit);
  }

  resume(): void {
    if (!this.paused) return;
    const now = performance.now();
    this.pauseCredit = Math.max(0, this.pauseCredit - (now - this.since));
    this.pausedMs += now - this.since;
    [this.paused, this.since] = [false, now];
    this.restart(this.left);
  }

  stop(): void {
    clearTimeout(this.timer);
    if (this.paused) this.pausedMs += performance.now() - this.since;
  }

  private restart(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(this.expire, Math.max(0, ms));
  }
}

export interface JailUsage {
  /** The peak resident set of the jail's largest process. */
  peakMemoryBytes: number;
}

/** The launcher's one line is some fifty bytes. */
const MAX_USAGE_BYTES = 1024;

function usageOf(pipe: Readable): Promise<JailUsage | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    pipe.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_USAGE_BYTES) chunks.push(chunk);
    });
    pipe.on('error', () => resolve(null));
    pipe.on('end', () => {
      try {
        const { max_rss_kib } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        if (typeof max_rss_kib !== 'number') return resolve(null);
        resolve({ peakMemoryBytes: max_rss_kib * 1024 });
      } catch {
        resolve(null);
      }
    });
  });
}

export interface JailStart {
  script: string;
  scriptArgs: string[];
  stdin: string;
  plugin?: Buffer;
  /** The tracer's own environment; the jail's is cleared whatever it holds. */
  env?: NodeJS.ProcessEnv;
  wallMs: number;
}

const writeAll = (pipe: Writable, bytes: Buffer | string) => {
  pipe.on('error', () => undefined);
  pipe.end(bytes);
};

/**
 * The tracer, and in it the jail, started in a process group of their own, so the wall-clock
 * limit kills them whatever the plugin does (--die-with-parent then takes the jail's processes
 * with bwrap). Rejects when the tracer cannot be started at all, or there is no process filter
 * for this machine.
 */
export function startJail(settings: JailSettings, start: JailStart): Promise<JailProcess> {
  const filter = processFilter();
  if (filter === null)
    return Promise.reject(Object.assign(new Error('no process filter'), { code: 'EARCH' }));
  const asRoot = process.getuid?.() === 0;
  const command = jailCommand(settings, start.script, start.scriptArgs, start.plugin !== undefined, asRoot);
  const script = readFileSync(path.join(PYTHON_DIR, start.script));
  const companions = companionsOf(start.script).map(({ name, fd }) => ({
    fd,
    bytes: readFileSync(path.join(PYTHON_DIR, name)),
  }));
  const filterFd = filterFdOf(start.script);
  const jailStderrFd = jailStderrFdOf(start.script);
  const usageFd = usageFdOf(start.script);
  const stdio: Array<'pipe' | 'ignore'> = Array.from({ length: usageFd + 1 }, () => 'pipe');
  if (start.plugin === undefined) stdio[4] = 'ignore';
  const child = spawn(command.file, command.args, {
    stdio,
    detached: true,
    // bwrap changes to /work inside; outside it needs no directory of the server's.
    cwd: '/',
    env: start.env ?? {},
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      child.removeListener('error', reject);
      child.on('error', () => undefined);
      let wallKilled = false;
      const kill = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // Already gone.
        }
      };
      const wall = new WallClock(start.wallMs, () => {
        wallKilled = true;
        kill();
      });
      const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; wallKilled: boolean }>(
        (done) => {
          child.once('close', (code, signal) => {
            wall.stop();
            done({ code, signal, wallKilled });
          });
        },
      );
      const pipes = child.stdio as unknown as Array<Writable & Readable>;
      writeAll(child.stdin!, start.stdin);
      writeAll(pipes[5], script);
      for (const companion of companions) writeAll(pipes[companion.fd], companion.bytes);
      if (start.plugin !== undefined) writeAll(pipes[4], start.plugin);
      writeAll(pipes[filterFd], filter);
      resolve({
        child,
        stdout: new BoundedText(child.stdout!, settings.maxOutputBytes),
        stderr: new BoundedText(pipes[jailStderrFd], settings.maxOutputBytes),
        channel: pipes[3],
        trace: pipes[2],
        usage: usageOf(pipes[usageFd]),
        wall,
        kill,
        ended,
      });
    });
  });
}
