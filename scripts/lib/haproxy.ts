import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from './app-process';
import { registerCleanup, sleep, withTimeout } from './cleanup';

export interface Backend {
  name: string;
  port: number;
}

/** A database frontend: its port, the node it writes to, and the nodes it falls back to in order. */
export interface DatabaseRoute {
  name: string;
  primary: Backend;
  backups: Backend[];
}

/** The body the app itself sends with its 503, so a client cannot tell a dead replica from a busy database. */
const UNAVAILABLE_BODY = '{"status":"fail","message":"Service unavailable"}';

/**
 * Debian's haproxy (`apt-get install haproxy` when missing), on loopback:
 *   - `api`: HTTP, round robin over the replicas, each health-checked on /api/v1/health/ready,
 *     so a replica whose readiness is down (stopping, database gone) leaves the pool. A
 *     request whose connection could not be made is sent to another replica (safe: the
 *     replica never saw it); one cut off mid-way (a replica killed) is answered 503, as the
 *     app answers when it cannot finish a request, never retried (it may have written).
 *   - one TCP frontend per database route: each replica writes to its own Galera node and
 *     moves to the next one in order when that node is down.
 */
export class Balancer {
  private child?: ChildProcess;
  private exited?: Promise<number | string>;
  private readonly statsSocket: string;
  readonly port: number;
  readonly databasePorts = new Map<string, number>();

  private constructor(
    private readonly baseDir: string,
    port: number,
  ) {
    this.port = port;
    this.statsSocket = join(baseDir, 'haproxy.sock');
  }

  /** Debian's package, installed the way .ci/run does when it is missing. */
  static ensureInstalled(): void {
    if (['/usr/sbin/haproxy', '/usr/bin/haproxy'].some(existsSync)) return;
    process.stdout.write('haproxy is missing: apt-get update && apt-get install -y haproxy\n');
    execFileSync('apt-get', ['update'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'haproxy'], { stdio: 'inherit' });
  }

  static binary(): string {
    const found = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find(existsSync);
    if (!found) throw new Error('haproxy is needed: apt-get update && apt-get install -y haproxy');
    return found;
  }

  static async create(baseDir: string, routes: DatabaseRoute[]): Promise<Balancer> {
    const balancer = new Balancer(baseDir, await freePort());
    for (const route of routes) balancer.databasePorts.set(route.name, await freePort());
    balancer.routes = routes;
    return balancer;
  }

  private routes: DatabaseRoute[] = [];

  private config(replicas: Backend[]): string {
    const errorFile = join(this.baseDir, '503.http');
    writeFileSync(
      errorFile,
      'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n' +
        `Cache-Control: no-store\r\nConnection: close\r\nContent-Length: ${UNAVAILABLE_BODY.length}\r\n\r\n` +
        UNAVAILABLE_BODY,
    );
    const lines = [
      'global',
      '  maxconn 512',
      `  stats socket ${this.statsSocket} mode 600 level admin`,
      'defaults',
      '  timeout connect 2s',
      '  timeout client 30s',
      '  timeout server 30s',
      '  timeout check 2s',
      `  errorfile 502 ${errorFile}`,
      `  errorfile 504 ${errorFile}`,
      `  errorfile 503 ${errorFile}`,
      'frontend api',
      '  mode http',
      `  bind 127.0.0.1:${this.port}`,
      // One request per client connection. A replica that dies mid-request on a kept-alive
      // client connection (not its first request) is answered by HAProxy with a silent close,
      // meant for browsers to retry; on a connection's first request it answers the 503 above.
      '  option httpclose',
      '  default_backend replicas',
      'backend replicas',
      '  mode http',
      '  balance roundrobin',
      '  option httpchk GET /api/v1/health/ready',
      '  http-check expect status 200',
      // A fresh connection per request: a request cut off by a killed replica then gets the
      // 503 above, where a reused connection's failure would reset the client's connection.
      '  option http-server-close',
      '  http-reuse never',
      // The client's address for the replicas' limits and log (they trust 127.0.0.1).
      '  option forwardfor',
      '  retries 2',
      '  retry-on conn-failure',
      '  option redispatch',
      ...replicas.map(
        (replica) =>
          `  server ${replica.name} 127.0.0.1:${replica.port} check inter 500ms fall 2 rise 2 observe layer4 error-limit 1 on-error mark-down`,
      ),
    ];
    for (const route of this.routes) {
      lines.push(
        `listen db_${route.name}`,
        '  mode tcp',
        `  bind 127.0.0.1:${this.databasePorts.get(route.name)}`,
        '  timeout client 1h',
        '  timeout server 1h',
        '  option tcp-check',
        `  server ${route.primary.name} 127.0.0.1:${route.primary.port} check inter 500ms fall 2 rise 2 on-marked-down shutdown-sessions`,
        ...route.backups.map(
          (backup) =>
            `  server ${backup.name} 127.0.0.1:${backup.port} check inter 500ms fall 2 rise 2 backup on-marked-down shutdown-sessions`,
        ),
      );
    }
    return `${lines.join('\n')}\n`;
  }

  async start(replicas: Backend[]): Promise<void> {
    const configFile = join(this.baseDir, 'haproxy.cfg');
    writeFileSync(configFile, this.config(replicas));
    execFileSync(Balancer.binary(), ['-c', '-q', '-f', configFile]);
    const log = createWriteStream(join(this.baseDir, 'haproxy.log'), { flags: 'a' });
    log.on('error', () => undefined);
    // -db: in the foreground, so it is this script's child and ends with it.
    const child = spawn(Balancer.binary(), ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    this.child = child;
    let running = true;
    this.exited = new Promise((resolveExit) =>
      child.once('exit', (code, signal) => {
        running = false;
        resolveExit(code ?? signal ?? 'unknown');
      }),
    );
    const unregister = registerCleanup(
      `haproxy pid ${child.pid}`,
      () => this.stop(),
      () => {
        if (running) child.kill('SIGKILL');
      },
    );
    void this.exited.then(unregister);
    for (let waited = 0; !existsSync(this.statsSocket); waited += 50) {
      if (!running)
        throw new Error(`haproxy exited:\n${readFileSync(join(this.baseDir, 'haproxy.log'), 'utf8')}`);
      if (waited > 10_000) throw new Error('haproxy did not start within 10 s');
      await sleep(50);
    }
  }

  /** A command of HAProxy's runtime API (the stats socket), e.g. `disable server replicas/r2`. */
  command(line: string): Promise<string> {
    return withTimeout(
      new Promise<string>((resolveAnswer, reject) => {
        const socket = connect(this.statsSocket);
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString()));
        socket.on('end', () => resolveAnswer(answer));
        socket.on('error', reject);
        socket.end(`${line}\n`);
      }),
      5_000,
      `haproxy command ${line}`,
    );
  }

  /** The replicas' states as HAProxy's health checks see them (UP, DOWN, MAINT, ...). */
  async replicaStates(): Promise<Record<string, string>> {
    const csv = await this.command('show stat');
    const states: Record<string, string> = {};
    for (const row of csv.split('\n')) {
      const fields = row.split(',');
      if (fields[0] === 'replicas' && fields[1] !== 'BACKEND' && fields[1] !== 'FRONTEND') {
        states[fields[1]] = fields[17];
      }
    }
    return states;
  }

  async waitForReplicas(expected: Record<string, string>, timeoutMs = 30_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const states = await this.replicaStates();
      if (Object.entries(expected).every(([name, state]) => states[name]?.startsWith(state))) return;
      if (performance.now() > deadline)
        throw new Error(`replicas ${JSON.stringify(states)}, not ${JSON.stringify(expected)}`);
      await sleep(200);
    }
  }

  async stop(): Promise<void> {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    await withTimeout(this.exited!, 10_000, 'haproxy shutdown').catch(() => this.child!.kill('SIGKILL'));
  }
}
