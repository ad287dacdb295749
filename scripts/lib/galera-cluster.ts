import { ChildProcess, execFile, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from './app-process';
import { registerCleanup, sleep, withTimeout } from './cleanup';

const run = promisify(execFile);

/** Debian's uid and gid of `nobody`, as which rsync's daemon writes when root starts it. */
const NOBODY = 65534;

const PROVIDERS = ['/usr/lib/galera/libgalera_smm.so', '/usr/lib/libgalera_smm.so'];

/**
 * One node of a MariaDB Galera cluster of the script's own: its data directory, a client
 * port and a replication (gcomm) port on 127.0.0.1, small memory (buffer pool, gcache).
 * `--no-defaults` keeps the system's my.cnf (and the shared server on 3306) out of it.
 */
export class GaleraNode {
  private child?: ChildProcess;
  private exitedPromise?: Promise<number | string>;
  running = false;
  readonly dataDir: string;
  private readonly errorLog: string;

  constructor(
    readonly index: number,
    private readonly baseDir: string,
    readonly port: number,
    readonly gcommPort: number,
    readonly istPort: number,
    private readonly binary: string,
    private readonly provider: string,
  ) {
    this.dataDir = join(baseDir, 'data');
    this.errorLog = join(baseDir, 'error.log');
  }

  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  /** `peers`: gcomm addresses of the other nodes; empty bootstraps a new cluster. */
  async start(peers: string[], timeoutMs = 90_000): Promise<void> {
    const args = [
      '--no-defaults',
      `--datadir=${this.dataDir}`,
      `--port=${this.port}`,
      `--socket=${join(this.baseDir, 'mysqld.sock')}`,
      '--bind-address=127.0.0.1',
      `--pid-file=${join(this.baseDir, 'mysqld.pid')}`,
      `--log-error=${this.errorLog}`,
      '--skip-name-resolve',
      '--innodb-buffer-pool-size=32M',
      '--innodb-log-file-size=16M',
      '--max-connections=200',
      '--performance-schema=OFF',
      // What Galera requires: row-based binary log format, InnoDB, interleaved auto-increment.
      '--binlog-format=ROW',
      '--default-storage-engine=InnoDB',
      '--innodb-autoinc-lock-mode=2',
      '--wsrep-on=ON',
      `--wsrep-provider=${this.provider}`,
      '--wsrep-cluster-name=svc_cluster_test',
      `--wsrep-node-name=node${this.index}`,
      `--wsrep-node-address=127.0.0.1:${this.gcommPort}`,
      `--wsrep-cluster-address=gcomm://${peers.join(',')}`,
      // Small gcache; IST on its own port, since all nodes share one address.
      `--wsrep-provider-options=gcache.size=32M;gmcast.listen_addr=tcp://127.0.0.1:${this.gcommPort};ist.recv_addr=127.0.0.1:${this.istPort};evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.install_timeout=PT5S;pc.wait_prim_timeout=PT10S`,
      '--wsrep-sst-method=rsync',
      `--wsrep-sst-receive-address=127.0.0.1:${this.istPort + 1}`,
      // Causal reads: a read waits until this node has applied what the cluster committed
      // before it, so a replica on another node sees the write its client was just told of.
      '--wsrep-sync-wait=1',
      '--wsrep-slave-threads=2',
    ];
    if (process.getuid?.() === 0) args.push('--user=root');
    if (peers.length === 0) args.push('--wsrep-new-cluster');
    // A joiner may be filled by a state transfer (rsync), whose daemon writes as `nobody` when root starts it.
    else if (process.getuid?.() === 0) await run('chown', ['-R', `${NOBODY}:${NOBODY}`, this.dataDir]);
    const out = createWriteStream(join(this.baseDir, 'stdout.log'), { flags: 'a' });
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
      `galera node${this.index} pid ${child.pid}`,
      async () => {
        if (this.running && this.child === child) await this.stop('SIGTERM');
      },
      () => {
        if (this.running && this.child === child) child.kill('SIGKILL');
      },
    );
    void this.exitedPromise.then(unregister);
    await this.waitUntilSynced(timeoutMs);
  }

  /** Answers queries and is a synced member of the primary component. */
  async waitUntilSynced(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`node${this.index} exited during start-up:\n${this.errorTail()}`);
      try {
        const rows = (await this.query(undefined, "SHOW STATUS LIKE 'wsrep_local_state_comment'")) as Array<{
          Value: string;
        }>;
        if (rows[0]?.Value === 'Synced') return;
      } catch {
        // not answering yet
      }
      if (performance.now() > deadline) {
        throw new Error(`node${this.index} was not synced within ${timeoutMs} ms:\n${this.errorTail()}`);
      }
      await sleep(250);
    }
  }

  async stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<{ ms: number; exit: number | string }> {
    if (!this.running || !this.child) throw new Error(`node${this.index} is not running`);
    const started = performance.now();
    this.child.kill(signal);
    let exit: number | string;
    try {
      exit = await withTimeout(this.exitedPromise!, 60_000, `node${this.index} shutdown`);
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
      connectTimeout: 3_000,
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

/** Three (or more) nodes on loopback, each initialised on a fresh directory under `baseDir`. */
export class GaleraCluster {
  private constructor(readonly nodes: GaleraNode[]) {}

  static async create(baseDir: string, size = 3): Promise<GaleraCluster> {
    const binary = process.env.MARIADBD ?? ['/usr/sbin/mariadbd', '/usr/sbin/mysqld'].find(existsSync);
    const installer = ['/usr/bin/mariadb-install-db', '/usr/bin/mysql_install_db'].find(existsSync);
    const provider = PROVIDERS.find(existsSync);
    if (!binary || !installer || !provider) {
      throw new Error('mariadbd, mariadb-install-db and galera-4 (libgalera_smm.so) are needed');
    }
    const nodes: GaleraNode[] = [];
    for (let index = 1; index <= size; index += 1) {
      const dir = join(baseDir, `node${index}`);
      mkdirSync(dir, { recursive: true });
      const ports = [await freePort(), await freePort(), await freePort()];
      const node = new GaleraNode(index, dir, ports[0], ports[1], ports[2], binary, provider);
      // Only the first node is initialised: the others receive its state on joining (SST).
      if (index === 1) {
        const args = [
          '--no-defaults',
          `--datadir=${node.dataDir}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
        ];
        if (process.getuid?.() === 0) args.push('--user=root');
        await run(installer, args, { timeout: 120_000 });
      } else {
        mkdirSync(node.dataDir, { recursive: true });
      }
      nodes.push(node);
    }
    return new GaleraCluster(nodes);
  }

  gcomm(node: GaleraNode): string {
    return `127.0.0.1:${node.gcommPort}`;
  }

  /** The first node bootstraps; the others join it one by one. */
  async start(): Promise<void> {
    const [first, ...rest] = this.nodes;
    await first.start([]);
    for (const node of rest) await node.start([this.gcomm(first)]);
  }

  /** A node that was killed joins again through the others (IST, or SST from a donor). */
  async rejoin(node: GaleraNode): Promise<void> {
    await node.start(this.nodes.filter((other) => other !== node && other.running).map((o) => this.gcomm(o)));
  }

  async clusterSize(through: GaleraNode): Promise<number> {
    const rows = (await through.query(undefined, "SHOW STATUS LIKE 'wsrep_cluster_size'")) as Array<{
      Value: string;
    }>;
    return Number(rows[0]?.Value ?? 0);
  }

  async stop(): Promise<void> {
    // The last one standing last, so it is the most advanced on a later bootstrap.
    for (const node of [...this.nodes].reverse()) if (node.running) await node.stop('SIGTERM');
  }
}
