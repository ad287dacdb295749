import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { companionsOf, jailArguments, PYTHON_DIR } from './jail-command';
import type { JailSettings } from './types';

/**
 * Whom bwrap runs as when the server is root: `nobody`. The jail maps its user to the one that
 * started it, and the kernel exempts root from the process limit (RLIMIT_NPROC), so a jail
 * started by root could fork without bound.
 */
const UNPRIVILEGED = { uid: 65534, gid: 65534 };

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
  /** Resolves when every process of the jail is gone: the exit code or signal of bwrap, and whether the wall clock ended it. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; wallKilled: boolean }>;
}

export interface JailStart {
  script: string;
  scriptArgs: string[];
  stdin: string;
  plugin?: Buffer;
  /** bwrap's own environment; the jail's is cleared whatever it holds. */
  env?: NodeJS.ProcessEnv;
  wallMs: number;
}

/**
 * bwrap started in a process group of its own, so the wall-clock limit kills it whatever the
 * plugin does (--die-with-parent and the PID namespace then take every process inside).
 * Rejects when bwrap cannot be started at all.
 */
export function startJail(settings: JailSettings, start: JailStart): Promise<JailProcess> {
  const args = jailArguments(settings, start.script, start.scriptArgs, start.plugin !== undefined);
  const script = readFileSync(path.join(PYTHON_DIR, start.script));
  const companions = companionsOf(start.script).map(({ name, fd }) => ({
    fd,
    bytes: readFileSync(path.join(PYTHON_DIR, name)),
  }));
  const child = spawn(settings.bwrapPath, args, {
    stdio: [
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      start.plugin !== undefined ? 'pipe' : 'ignore',
      'pipe',
      ...companions.map(() => 'pipe' as const),
    ],
    detached: true,
    // bwrap changes to /work inside; outside it needs no directory of the server's.
    cwd: '/',
    env: start.env ?? {},
    ...(process.getuid?.() === 0 ? UNPRIVILEGED : {}),
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      child.removeListener('error', reject);
      child.on('error', () => undefined);
      let wallKilled = false;
      const timer = setTimeout(() => {
        wallKilled = true;
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }, start.wallMs);
      const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; wallKilled: boolean }>(
        (done) => {
          child.once('close', (code, signal) => {
            clearTimeout(timer);
            done({ code, signal, wallKilled });
          });
        },
      );
      const stdin = child.stdin!;
      stdin.on('error', () => undefined);
      stdin.end(start.stdin);
      const scriptPipe = (child.stdio as unknown as Writable[])[5];
      scriptPipe.on('error', () => undefined);
      scriptPipe.end(script);
      for (const companion of companions) {
        const pipe = (child.stdio as unknown as Writable[])[companion.fd];
        pipe.on('error', () => undefined);
        pipe.end(companion.bytes);
      }
      if (start.plugin !== undefined) {
        const pluginPipe = child.stdio[4] as Writable;
        pluginPipe.on('error', () => undefined);
        pluginPipe.end(start.plugin);
      }
      resolve({
        child,
        stdout: new BoundedText(child.stdout!, settings.maxOutputBytes),
        stderr: new BoundedText(child.stderr!, settings.maxOutputBytes),
        channel: child.stdio[3] as Readable,
        ended,
      });
    });
  });
}
