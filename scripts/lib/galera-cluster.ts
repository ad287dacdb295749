import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './app-process';
import { sleep } from './cleanup';
import { initialiseDataDir, mariadbdBinary, MariadbdProcess } from './mariadbd-process';

const run = promisify(execFile);

/** Debian's uid and gid of `nobody`, as which rsync's daemon writes when root starts it. */
const NOBODY = 65534;

const PROVIDERS = ['/usr/lib/galera/libgalera_smm.so', '/usr/lib/libgalera_smm.so'];

/**
 * One node of a MariaDB Galera cluster of the script's own: its data directory, a client
 * port and a replication (gcomm) port on 127.0.0.1, small memory (buffer pool, gcache).
 */
export class GaleraNode extends MariadbdProcess {
  constructor(
    readonly index: number,
    baseDir: string,
    port: number,
    readonly gcommPort: number,
    readonly istPort: number,
    binary: string,
    private readonly provider: string,
  ) {
    super(`galera node${index}`, baseDir, binary, port);
  }

  /** `peers`: gcomm addresses of the other nodes; empty bootstraps a new cluster. */
  async start(peers: string[], timeoutMs = 90_000): Promise<void> {
    // A joiner may be filled by a state transfer (rsync), whose daemon writes as `nobody` when root starts it.
    if (peers.length > 0 && process.getuid?.() === 0)
      await run('chown', ['-R', `${NOBODY}:${NOBODY}`, this.dataDir]);
    this.spawn([
      '--innodb-buffer-pool-size=32M',
      '--innodb-log-file-size=16M',
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
      ...(peers.length === 0 ? ['--wsrep-new-cluster'] : []),
    ]);
    await this.waitUntilSynced(timeoutMs);
  }

  /** Answers queries and is a synced member of the primary component. */
  async waitUntilSynced(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`node${this.index} exited during start-up:\n${this.errorTail()}`);
      try {
        const rows = (await this.query(
          undefined,
          "SHOW STATUS LIKE 'wsrep_local_state_comment'",
          [],
          3_000,
        )) as Array<{
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
}

/** Three (or more) nodes on loopback, each initialised on a fresh directory under `baseDir`. */
export class GaleraCluster {
  private constructor(readonly nodes: GaleraNode[]) {}

  static async create(baseDir: string, size = 3): Promise<GaleraCluster> {
    const binary = mariadbdBinary('the cluster test');
    const provider = PROVIDERS.find((path) => existsSync(path));
    if (!provider) throw new Error('galera-4 (libgalera_smm.so) is needed for the cluster test');
    const nodes: GaleraNode[] = [];
    for (let index = 1; index <= size; index += 1) {
      const dir = join(baseDir, `node${index}`);
      mkdirSync(dir, { recursive: true });
      const ports = [await freePort(), await freePort(), await freePort()];
      const node = new GaleraNode(index, dir, ports[0], ports[1], ports[2], binary, provider);
      // Only the first node is initialised: the others receive its state on joining (SST).
      if (index === 1) await initialiseDataDir(node.dataDir);
      else mkdirSync(node.dataDir, { recursive: true });
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
