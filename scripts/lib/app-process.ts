import { ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, createWriteStream, existsSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { registerCleanup, sleep, withTimeout } from './cleanup';
import { HttpClient } from './http-client';
import type { MailWatch } from './workload';

/** The project root: scripts run from their sources (scripts/lib/ here) under tsx. */
export const PROJECT_ROOT = resolve(__dirname, '..', '..');

export interface AppOptions {
  databaseUrl: string;
  pluginDir: string;
  /** Everything the child writes, for the post-mortem. */
  logFile: string;
  logLevel?: string;
  /** Sockets the script's client keeps to the app. */
  maxSockets: number;
  requestTimeoutMs?: number;
  /** Further settings of the app. */
  env?: Record<string, string>;
  /**
   * The child writes straight into `logFile` instead of through a pipe this process reads
   * (timing runs: reading the pipe would cost the measuring process); `mail` sees nothing.
   */
  outputToFile?: boolean;
}

/** A loopback port that was free a moment ago; the app binds it right after. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Without SMTP_HOST the app prints every mail to stdout; this reads the activation links
 * from there, as an operator would, so accounts are activated through the real flow.
 */
export class MailBox {
  private buffer = '';
  /** The newest activation key and OTP mailed to each address, by `kind:address`. */
  private readonly codes = new Map<string, string>();
  private readonly waiters = new Map<string, Array<(code: string) => void>>();

  feed(chunk: string): void {
    this.buffer += chunk;
    const block = /----- mail to (\S+) -----\n([\s\S]*?)\n-----\n/g;
    let match: RegExpExecArray | null;
    let consumed = 0;
    while ((match = block.exec(this.buffer)) !== null) {
      consumed = block.lastIndex;
      const email = match[1].toLowerCase();
      const key = /\/email-verify\/([0-9a-f-]{36})/.exec(match[2])?.[1];
      if (key) this.found(`activation:${email}`, key);
      const otp = /OTP for the password change is (\d{6})/.exec(match[2])?.[1];
      if (otp) this.found(`otp:${email}`, otp);
    }
    // Log lines between mails are of no use here; keep only a possibly unfinished block.
    this.buffer = this.buffer.slice(consumed);
    if (this.buffer.length > 1_000_000) this.buffer = this.buffer.slice(-100_000);
  }

  /** The workload's MailWatch over the printed mail: a code seen before the call is not taken. */
  readonly watch: MailWatch = (kind, email) => {
    const slot = `${kind}:${email.toLowerCase()}`;
    const previous = this.codes.get(slot);
    return () => this.next(slot, previous, 10_000);
  };

  private found(slot: string, code: string): void {
    this.codes.set(slot, code);
    for (const wake of this.waiters.get(slot)?.splice(0) ?? []) wake(code);
  }

  private async next(slot: string, previous: string | undefined, timeoutMs: number): Promise<string> {
    const known = this.codes.get(slot);
    if (known && known !== previous) return known;
    return withTimeout(
      new Promise<string>((resolveCode) => {
        const list = this.waiters.get(slot) ?? [];
        list.push(resolveCode);
        this.waiters.set(slot, list);
      }),
      timeoutMs,
      `${slot.replace(':', ' mail to ')}`,
    );
  }
}

export interface RunningApp {
  port: number;
  pid: number;
  client: HttpClient;
  mail: MailBox;
  /** Resolves with the exit code (or signal name) when the child ends. */
  exited: Promise<number | string>;
  hasExited(): boolean;
  /** SIGTERM and wait (bounded), as an orchestrator would stop it; SIGKILL if it does not go. */
  stop(): Promise<{ code: number | string; ms: number }>;
  logTail(lines?: number): string;
}

/**
 * The app as production runs it: `node dist/src/main.js` with its settings in the
 * environment. The environment is built from scratch, so no DATABASE_URL or SMTP_HOST of
 * the caller's shell leaks in.
 */
export async function startApp(options: AppOptions): Promise<RunningApp> {
  const main = join(PROJECT_ROOT, 'dist', 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: options.databaseUrl,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    PLUGIN_MANIFEST_KEY: generateKeyPairSync('ed25519')
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString(),
    // bcrypt's cost is not what these scripts test; at the default (12) logins would be all they measure.
    BCRYPT_COST: '4',
    RATE_LIMIT: 'off',
    // The load runs upload many plugins and open many sessions per user, more the faster the
    // machine; the caps are not what is tested.
    PLUGIN_MAX_PENDING_PER_USER: '1000000',
    MAX_SESSIONS_PER_USER: '1000000',
    LOG_LEVEL: options.logLevel ?? 'silent',
    COMMUNITY_PLUGIN_DIR: options.pluginDir,
    SERVER_ADDR: '127.0.0.1',
    ...options.env,
  };
  const log = createWriteStream(options.logFile, { flags: 'a' });
  log.on('error', () => undefined); // the log is a diagnostic aid; losing it must not end the run
  const output = options.outputToFile ? openSync(options.logFile, 'a') : 'pipe';
  const child: ChildProcess = spawn(process.execPath, [main], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', output, output],
  });
  if (typeof output === 'number') closeSync(output);
  const mail = new MailBox();
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    log.write(chunk);
    mail.feed(chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
  let exitedFlag = false;
  const exited = new Promise<number | string>((resolveExit) => {
    // `close`, not `exit`: by then stdout and stderr are drained, so the log can be ended.
    child.once('close', (code, signal) => {
      exitedFlag = true;
      resolveExit(code ?? signal ?? 'unknown');
    });
  });
  const client = new HttpClient('127.0.0.1', port, options.maxSockets, options.requestTimeoutMs);

  let stopping: Promise<{ code: number | string; ms: number }> | undefined;
  // Once only: a second SIGTERM would cut short the app's own graceful shutdown.
  const stop = () => (stopping ??= stopOnce());
  const stopOnce = async () => {
    const started = performance.now();
    if (!exitedFlag) child.kill('SIGTERM');
    let code: number | string;
    try {
      code = await withTimeout(exited, 15_000, 'app shutdown');
    } catch {
      child.kill('SIGKILL');
      code = await exited;
    }
    client.close();
    await new Promise<void>((done) => log.end(done));
    return { code, ms: performance.now() - started };
  };
  const unregister = registerCleanup(
    `app pid ${child.pid}`,
    async () => {
      await stop();
    },
    () => {
      if (!exitedFlag) child.kill('SIGKILL');
    },
  );

  const app: RunningApp = {
    port,
    pid: child.pid!,
    client,
    mail,
    exited,
    hasExited: () => exitedFlag,
    stop: async () => {
      unregister();
      return stop();
    },
    logTail: (lines = 30) => {
      try {
        return readFileSync(options.logFile, 'utf8').split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
  };

  // Ready when the readiness probe says so: database reachable and migrations applied.
  const deadline = performance.now() + 90_000;
  for (;;) {
    if (exitedFlag) {
      throw new Error(`the app exited during start-up (${String(await exited)}):\n${app.logTail()}`);
    }
    const probe = await client.get('/api/v1/health/ready', { timeoutMs: 2_000 });
    if (probe.status === 200) return app;
    if (performance.now() > deadline) {
      throw new Error(`the app was not ready within 90 s (last: ${probe.status} ${probe.error ?? ''})`);
    }
    await sleep(200);
  }
}
