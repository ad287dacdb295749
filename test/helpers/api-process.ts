import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_JWT_SECRET } from './test-app';

const ROOT = join(__dirname, '..', '..');

/**
 * Ports a test process is given are drawn at random from below the range the system hands out
 * for port 0 and for outgoing connections (32768 and up on Linux). Port 0's own choice, closed
 * again, went to another worker running side by side before this one's child bound it: that
 * child was then sent the other's answers. Here two picks meet only by a 1-in-12,000 chance.
 */
const PICKED_PORTS = { from: 20_000, to: 32_000 };

/** A port nothing listens on now, for a process about to be started. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = PICKED_PORTS.from + Math.floor(Math.random() * (PICKED_PORTS.to - PICKED_PORTS.from));
    if (await isFree(port)) return port;
  }
  throw new Error('no free port found');
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface PostAnswer {
  status: number;
  body: unknown;
  headers: IncomingHttpHeaders;
  connection?: string;
}

/**
 * A JSON POST to 127.0.0.1:<port>. `localAddress` picks the client's own loopback address
 * (127.0.0.2, ...), so one test can be several clients as the server sees them.
 */
/** Reads an answer to its end, its body parsed as JSON. */
function readJsonAnswer(
  response: IncomingMessage,
  resolve: (answer: PostAnswer) => void,
  reject: (error: unknown) => void,
): void {
  const chunks: Buffer[] = [];
  response.on('data', (chunk: Buffer) => chunks.push(chunk));
  response.on('error', reject);
  response.on('end', () => {
    try {
      resolve({
        status: response.statusCode ?? 0,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        headers: response.headers,
        connection: response.headers.connection,
      });
    } catch (error) {
      reject(error);
    }
  });
}

export function post(
  port: number,
  path: string,
  body: object,
  options: { localAddress?: string; headers?: Record<string, string> } = {},
): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const call = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        localAddress: options.localAddress,
        headers: {
          ...options.headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (response) => readJsonAnswer(response, resolve, reject),
    );
    call.on('error', reject);
    call.end(payload);
  });
}

/**
 * A GET to 127.0.0.1:<port>, its body parsed as JSON. Like post, on a connection of its own: the
 * global agent's kept-alive sockets may be ones a stopping server is closing, or ones to an
 * earlier process on the same port, and a request sent on one fails with "socket hang up".
 */
export function getJson(port: number, path: string): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path, agent: false }, (response) =>
      readJsonAnswer(response, resolve, reject),
    )
      .on('error', reject)
      .end();
  });
}

/**
 * Until the process answers and its start-up work (which follows listening) is done: readiness
 * answers 200, or 503 with its `startup` check up (another check may rightly be down).
 */
export async function waitUntilReady(port: number, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    const answer = await getJson(port, '/api/v1/health/ready').catch(() => undefined);
    const errors = (answer?.body as { errors?: Record<string, string> } | undefined)?.errors;
    if (answer?.status === 200 || (answer?.status === 503 && errors?.startup === 'up')) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not become ready');
}

export interface ApiProcess {
  child: ChildProcess;
  port: number;
  /** SIGTERM, then SIGKILL if it lingers. */
  stop: () => Promise<void>;
}

/** The real entrypoint (src/main.ts through the per-file transpile hook), in a fresh directory unless `cwd` is given. */
function spawnEntrypoint(
  port: number,
  env: Record<string, string>,
  stdio: 'ignore' | ['ignore', 'pipe', 'pipe'],
  cwd = mkdtempSync(join(tmpdir(), 'svc-process-')),
): ChildProcess {
  return spawn(
    process.execPath,
    ['-r', join(ROOT, 'test/helpers/ts-register.js'), join(ROOT, 'src/main.ts')],
    {
      cwd,
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        JWT_SECRET: TEST_JWT_SECRET,
        BCRYPT_COST: '4',
        LOG_LEVEL: 'silent',
        ...env,
      },
      stdio,
    },
  );
}

/** The real entrypoint as its own process, once it answers. */
export async function startApiProcess(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawnEntrypoint(port, env, 'ignore');
  try {
    await waitUntilReady(port, child);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { child, port, stop: () => stopProcess(child) };
}

/** SIGTERM, and SIGKILL if it has not exited 15 s later. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export interface ObservedApiProcess {
  child: ChildProcess;
  port: number;
  /** Everything it wrote so far. */
  stdout: () => string;
  stderr: () => string;
  /** The exit code once it has exited (after its output is read to the end). */
  exited: Promise<number | null>;
  /** Resolves once its stdout matches: a sign from the server, not a guess at timing. */
  waitForOutput: (until: RegExp | ((stdout: string) => boolean)) => Promise<void>;
}

/**
 * The real entrypoint as its own process, its output captured, not waited for: for the
 * tests of how it starts (or does not) and how it stops.
 */
export async function spawnApiProcess(
  env: Record<string, string>,
  options: { cwd?: string } = {},
): Promise<ObservedApiProcess> {
  const port = await freePort();
  const child = spawnEntrypoint(port, env, ['ignore', 'pipe', 'pipe'], options.cwd);
  let stdout = '';
  let stderr = '';
  const watchers = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const watcher of watchers) watcher();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const waitForOutput = (until: RegExp | ((stdout: string) => boolean)) =>
    new Promise<void>((resolve, reject) => {
      const matches = typeof until === 'function' ? until : (text: string) => until.test(text);
      const watcher = () => {
        if (!matches(stdout)) return;
        watchers.delete(watcher);
        resolve();
      };
      watchers.add(watcher);
      watcher();
      void exited.then((code) => {
        if (!watchers.has(watcher)) return;
        watchers.delete(watcher);
        reject(new Error(`exited with ${code} before writing ${String(until)}:\n${stdout}\n${stderr}`));
      });
    });
  return { child, port, stdout: () => stdout, stderr: () => stderr, exited, waitForOutput };
}
