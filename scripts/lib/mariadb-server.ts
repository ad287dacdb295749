import { ChildProcess, execFile, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from './app-process';
import { registerCleanup, sleep, withTimeout } from './cleanup';

const run = promisify(execFile);

function firstExisting(candidates: string[]): string | undefined {
  return candidates.find((candidate) => existsSync(candidate));
}

function onPath(names: string[]): string | undefined {
  const dirs = (process.env.PATH ?? '/usr/bin:/bin').split(':').concat(['/usr/sbin', '/usr/bin', '/sbin']);
  for (const name of names) {
    const found = firstExisting(dirs.map((dir) => join(dir, name)));
    if (found) return found;
  }
  return undefined;
}

/**
 * A MariaDB server of the script's own, on a fresh data directory and a free port, so the
 * fault test can kill it without touching the shared server on 3306 that others are using.
 * `--no-defaults` keeps the system's my.cnf (and with it the shared server's datadir,
 * socket and port) out of it.
 */
export class PrivateMariaDb {
  private child?: ChildProcess;
  private exitedPromise?: Promise<number | string>;
  private running = false;
  private readonly dataDir: string;
  private readonly socket: string;
  private readonly errorLog: string;

  private constructor(
    private readonly baseDir: string,
    private readonly binary: string,
    readonly port: number,
  ) {
    this.dataDir = join(baseDir, 'data');
    this.socket = join(baseDir, 'mysqld.sock');
    this.errorLog = join(baseDir, 'mysqld-error.log');
  }

  /** Initialises a data directory under `baseDir` (which the caller removes afterwards). */
  static async create(baseDir: string): Promise<PrivateMariaDb> {
    const binary = process.env.MARIADBD ?? onPath(['mariadbd', 'mysqld']);
    const installer = onPath(['mariadb-install-db', 'mysql_install_db']);
    if (!binary || !installer)
      throw new Error('mariadbd and mariadb-install-db are needed for the fault test');
    mkdirSync(baseDir, { recursive: true });
    const server = new PrivateMariaDb(baseDir, binary, await freePort());
    const args = [
      '--no-defaults',
      `--datadir=${server.dataDir}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ];
    // The server refuses to run as root unless told to; as another user it runs as that user.
    if (process.getuid?.() === 0) args.push('--user=root');
    await run(installer, args, { timeout: 120_000 });
    return server;
  }

  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  /** Starts the server on the data directory and waits until it answers a query. */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.running) throw new Error('the private MariaDB is already running');
    await this.spawnServer();
    await this.waitUntilAnswering(timeoutMs);
  }

  /**
   * SIGSTOP: the process stays, its sockets stay open, nothing answers. To a client this is
   * what a network partition or a paused container looks like: no refusal, only silence.
   */
  freeze(): void {
    if (!this.running || !this.child) throw new Error('the private MariaDB is not running');
    this.child.kill('SIGSTOP');
  }

  async thaw(timeoutMs = 60_000): Promise<void> {
    if (!this.running || !this.child) throw new Error('the private MariaDB is not running');
    this.child.kill('SIGCONT');
    await this.waitUntilAnswering(timeoutMs);
  }

  private async spawnServer(): Promise<void> {
    const args = [
      '--no-defaults',
      `--datadir=${this.dataDir}`,
      `--port=${this.port}`,
      `--socket=${this.socket}`,
      '--bind-address=127.0.0.1',
      `--pid-file=${join(this.baseDir, 'mysqld.pid')}`,
      `--log-error=${this.errorLog}`,
      '--skip-name-resolve',
      '--skip-log-bin',
      '--innodb-buffer-pool-size=64M',
      '--max-connections=200',
    ];
    if (process.getuid?.() === 0) args.push('--user=root');
    const out = createWriteStream(join(this.baseDir, 'mysqld-stdout.log'), { flags: 'a' });
    out.on('error', () => undefined);
    const child = spawn(this.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    this.child = child;
    this.running = true;
    this.exitedPromise = new Promise((resolveExit) => {
      child.once('exit', (code, signal) => {
        this.running = false;
        resolveExit(code ?? signal ?? 'unknown');
      });
    });
    const unregister = registerCleanup(
      `mariadbd pid ${child.pid}`,
      async () => {
        if (this.running && this.child === child) await this.stop('SIGTERM');
      },
      () => {
        if (this.running && this.child === child) {
          child.kill('SIGCONT');
          child.kill('SIGKILL');
        }
      },
    );
    void this.exitedPromise.then(unregister);
  }

  private async waitUntilAnswering(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`mariadbd exited during start-up:\n${this.errorTail()}`);
      try {
        const connection = await mysql.createConnection({
          host: '127.0.0.1',
          port: this.port,
          user: 'root',
          connectTimeout: 1_000,
        });
        await connection.query('SELECT 1');
        await connection.end();
        return;
      } catch (error) {
        if (performance.now() > deadline) {
          throw new Error(`mariadbd did not answer within ${timeoutMs} ms: ${String(error)}`, {
            cause: error,
          });
        }
        await sleep(100);
      }
    }
  }

  /**
   * SIGTERM is an orderly shutdown (connections are closed by the server); SIGKILL is a
   * crash: sockets vanish mid-query and the next start runs crash recovery.
   */
  async stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<{ ms: number; exit: number | string }> {
    if (!this.running || !this.child) throw new Error('the private MariaDB is not running');
    const started = performance.now();
    this.child.kill('SIGCONT'); // a frozen server would leave SIGTERM pending
    this.child.kill(signal);
    let exit: number | string;
    try {
      exit = await withTimeout(this.exitedPromise!, 60_000, 'mariadbd shutdown');
    } catch {
      this.child.kill('SIGKILL');
      exit = await this.exitedPromise!;
    }
    return { ms: performance.now() - started, exit };
  }

  async query(database: string | undefined, sql: string, params: unknown[] = []): Promise<unknown[]> {
    const connection = await mysql.createConnection({
      host: '127.0.0.1',
      port: this.port,
      user: 'root',
      database,
      connectTimeout: 5_000,
    });
    try {
      const [rows] = await connection.query(sql, params);
      return rows as unknown[];
    } finally {
      await connection.end();
    }
  }

  errorTail(lines = 20): string {
    try {
      return readFileSync(this.errorLog, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}
