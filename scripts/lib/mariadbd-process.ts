import { ChildProcess, execFile, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { registerCleanup, withTimeout } from './cleanup';

const run = promisify(execFile);
const asRoot = () => process.getuid?.() === 0;

function onPath(names: string[]): string | undefined {
  const dirs = (process.env.PATH ?? '/usr/bin:/bin').split(':').concat(['/usr/sbin', '/usr/bin', '/sbin']);
  for (const name of names) {
    const found = dirs.map((dir) => join(dir, name)).find((candidate) => existsSync(candidate));
    if (found) return found;
  }
  return undefined;
}

/** The server binary (MARIADBD, else on PATH), or an error naming what `purpose` needs. */
export function mariadbdBinary(purpose: string): string {
  const binary = process.env.MARIADBD ?? onPath(['mariadbd', 'mysqld']);
  if (!binary) throw new Error(`mariadbd is needed for ${purpose}`);
  return binary;
}

/** A fresh system database in `dataDir`, root without a password. */
export async function initialiseDataDir(dataDir: string): Promise<void> {
  const installer = onPath(['mariadb-install-db', 'mysql_install_db']);
  if (!installer) throw new Error('mariadb-install-db is needed to initialise a data directory');
  mkdirSync(dataDir, { recursive: true });
  const args = [
    '--no-defaults',
    `--datadir=${dataDir}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
  ];
  // The server refuses to run as root unless told to; as another user it runs as that user.
  if (asRoot()) args.push('--user=root');
  await run(installer, args, { timeout: 120_000 });
}

/**
 * One `mariadbd` of a script's own, on loopback, its files under `baseDir`: started with the
 * arguments every such server shares plus its own, stopped or killed, cleaned up if the script
 * ends first. `--no-defaults` keeps the system's my.cnf (and with it the shared server's
 * datadir, socket and port) out of it.
 */
export class MariadbdProcess {
  private child?: ChildProcess;
  private exitedPromise?: Promise<number | string>;
  private isRunning = false;
  readonly dataDir: string;
  private readonly errorLog: string;

  constructor(
    readonly name: string,
    private readonly baseDir: string,
    private readonly binary: string,
    readonly port: number,
  ) {
    this.dataDir = join(baseDir, 'data');
    this.errorLog = join(baseDir, 'error.log');
  }

  get running(): boolean {
    return this.isRunning;
  }

  get pid(): number | undefined {
    return this.isRunning ? this.child?.pid : undefined;
  }

  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  spawn(ownArgs: string[]): void {
    if (this.isRunning) throw new Error(`${this.name} is already running`);
    const args = [
      '--no-defaults',
      `--datadir=${this.dataDir}`,
      `--port=${this.port}`,
      `--socket=${join(this.baseDir, 'mysqld.sock')}`,
      '--bind-address=127.0.0.1',
      `--pid-file=${join(this.baseDir, 'mysqld.pid')}`,
      `--log-error=${this.errorLog}`,
      '--skip-name-resolve',
      '--max-connections=200',
      ...ownArgs,
    ];
    if (asRoot()) args.push('--user=root');
    const out = createWriteStream(join(this.baseDir, 'stdout.log'), { flags: 'a' });
    out.on('error', () => undefined);
    const child = spawn(this.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    this.child = child;
    this.isRunning = true;
    this.exitedPromise = new Promise((resolveExit) => {
      child.once('exit', (code, signal) => {
        this.isRunning = false;
        resolveExit(code ?? signal ?? 'unknown');
      });
    });
    const unregister = registerCleanup(
      `${this.name} pid ${child.pid}`,
      async () => {
        if (this.isRunning && this.child === child) await this.stop('SIGTERM');
      },
      () => {
        if (this.isRunning && this.child === child) {
          child.kill('SIGCONT');
          child.kill('SIGKILL');
        }
      },
    );
    void this.exitedPromise.then(unregister);
  }

  /** SIGSTOP and SIGCONT: a frozen server keeps its sockets open and answers nothing. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    if (!this.isRunning || !this.child) throw new Error(`${this.name} is not running`);
    this.child.kill(signal);
  }

  /**
   * SIGTERM is an orderly shutdown (connections are closed by the server); SIGKILL is a
   * crash: sockets vanish mid-query and the next start runs crash recovery.
   */
  async stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<{ ms: number; exit: number | string }> {
    if (!this.isRunning || !this.child) throw new Error(`${this.name} is not running`);
    const started = performance.now();
    this.child.kill('SIGCONT'); // a frozen server would leave SIGTERM pending
    this.child.kill(signal);
    let exit: number | string;
    try {
      exit = await withTimeout(this.exitedPromise!, 60_000, `${this.name} shutdown`);
    } catch {
      this.child.kill('SIGKILL');
      exit = await this.exitedPromise!;
    }
    return { ms: performance.now() - started, exit };
  }

  async query(
    database: string | undefined,
    sql: string,
    params: unknown[] = [],
    connectTimeout = 5_000,
  ): Promise<unknown[]> {
    const connection = await mysql.createConnection({
      host: '127.0.0.1',
      port: this.port,
      user: 'root',
      database,
      connectTimeout,
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
