import { mkdirSync } from 'node:fs';
import { freePort } from './app-process';
import { sleep } from './cleanup';
import { initialiseDataDir, mariadbdBinary, MariadbdProcess } from './mariadbd-process';

/**
 * A MariaDB server of the script's own, on a fresh data directory and a free port, so the
 * fault test can kill it without touching the shared server on 3306 that others are using.
 */
export class PrivateMariaDb extends MariadbdProcess {
  /** Initialises a data directory under `baseDir` (which the caller removes afterwards). */
  static async create(baseDir: string): Promise<PrivateMariaDb> {
    mkdirSync(baseDir, { recursive: true });
    const server = new PrivateMariaDb(
      'mariadbd',
      baseDir,
      mariadbdBinary('the fault test'),
      await freePort(),
    );
    await initialiseDataDir(server.dataDir);
    return server;
  }

  /** Starts the server on the data directory and waits until it answers a query. */
  async start(timeoutMs = 60_000): Promise<void> {
    this.spawn(['--skip-log-bin', '--innodb-buffer-pool-size=64M']);
    await this.waitUntilAnswering(timeoutMs);
  }

  /**
   * SIGSTOP: the process stays, its sockets stay open, nothing answers. To a client this is
   * what a network partition or a paused container looks like: no refusal, only silence.
   */
  freeze(): void {
    this.signal('SIGSTOP');
  }

  async thaw(timeoutMs = 60_000): Promise<void> {
    this.signal('SIGCONT');
    await this.waitUntilAnswering(timeoutMs);
  }

  private async waitUntilAnswering(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`mariadbd exited during start-up:\n${this.errorTail()}`);
      try {
        await this.query(undefined, 'SELECT 1', [], 1_000);
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
}
