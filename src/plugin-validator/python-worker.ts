import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The analyser's entry point, beside this module (the build copies it and its package analysis/
 * next to the compiled file).
 */
export const ANALYSER_PATH = path.join(__dirname, 'python', 'analyser.py');
/** The interpreter the framework runs plugins with: the analyser judges with the same parser. */
export const REQUIRED_PYTHON = '3.11';
/**
 * Linux nice value of a worker: it gives the CPU up to the event loop whenever that wants it,
 * and still gets every cycle the event loop leaves.
 */
export const WORKER_NICE = 10;

interface Pending {
  resolve: (answer: Record<string, unknown>) => void;
  reject: (error: Error) => void;
}

/**
 * One long-lived `python3` running the analyser, isolated (-I: no environment, no user site,
 * no script directory on the path; -S: no site module; -B: writes no bytecode). Requests and
 * answers are JSON lines; one request at a time. It never runs a plugin: it parses it.
 */
export class PythonWorker {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly ready: Promise<void>;
  private pending?: Pending;
  private nextId = 1;
  private exited = false;

  constructor(python = 'python3') {
    this.child = spawn(python, ['-I', '-S', '-B', ANALYSER_PATH], { stdio: ['pipe', 'pipe', 'pipe'] });
    if (this.child.pid !== undefined) {
      try {
        setPriority(this.child.pid, WORKER_NICE);
      } catch {
        // Not allowed on this system: the worker runs at the server's priority.
      }
    }
    // Its stderr is read and dropped: a traceback tells nothing an uploader should see.
    this.child.stderr.resume();
    let greet: Pending | undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      greet = {
        resolve: (hello) =>
          hello.python === REQUIRED_PYTHON
            ? resolve()
            : reject(new Error(`python3 is ${String(hello.python)}; the analyser needs ${REQUIRED_PYTHON}`)),
        reject,
      };
    });
    this.ready.catch(() => undefined);
    this.pending = greet;
    const lines = createInterface({ input: this.child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      const waiting = this.pending;
      this.pending = undefined;
      if (!waiting) return;
      try {
        waiting.resolve(JSON.parse(line) as Record<string, unknown>);
      } catch (error) {
        waiting.reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    const fail = (reason: string) => {
      this.exited = true;
      const waiting = this.pending;
      this.pending = undefined;
      waiting?.reject(new Error(reason));
    };
    this.child.on('exit', (code, signal) => fail(`analyser exited (${signal ?? code})`));
    this.child.on('error', (error) => fail(`analyser failed to start: ${error.message}`));
    this.child.stdin.on('error', () => undefined);
  }

  /** Resolves once the analyser has loaded its tables and said which Python it runs on. */
  started(): Promise<void> {
    return this.ready;
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** Sends one request; the answer's `id` must match. Rejects if the process dies. */
  async request(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    await this.ready;
    if (this.exited) throw new Error('analyser is not running');
    if (this.pending) throw new Error('analyser is busy');
    const id = this.nextId++;
    const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.stdin.write(`${JSON.stringify({ ...body, id })}\n`);
    });
    if (answer.id !== id) throw new Error('analyser answered out of turn');
    return answer;
  }

  kill(): void {
    this.exited = true;
    this.child.kill('SIGKILL');
  }

  /** Closes its stdin: the analyser's loop ends and the process exits. */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    await exited;
  }
}
