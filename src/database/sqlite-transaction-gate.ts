import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager } from 'typeorm';

/** The gate of each data source it was installed on (SqliteTransactionGate.of). */
const installed = new WeakMap<DataSource, SqliteTransactionGate>();

/**
 * TypeORM gives better-sqlite3 one connection and one query runner for the whole process. A
 * transaction is a BEGIN on that connection, so while it is open every other request's
 * queries run inside it (and vanish if it rolls back), and a second transaction becomes a
 * savepoint of the first (whose commit then only releases the other's savepoint). The gate
 * gives the connection to one transaction at a time: a transaction waits for the one before
 * it, and a query from outside waits while one is open. A transaction is told apart from the
 * rest by the async context it runs in, so any code it awaits counts as inside it.
 */
export class SqliteTransactionGate {
  private readonly context = new AsyncLocalStorage<symbol>();
  private holder: symbol | null = null;
  private waiting: Array<() => void> = [];

  /** The one connection busy with a transaction or not, and who waits for it (the metrics read it). */
  get load(): { busy: number; idle: number; waiting: number } {
    const busy = this.holder === null ? 0 : 1;
    return { busy, idle: 1 - busy, waiting: this.waiting.length };
  }

  /** Runs `work` as the one open transaction; a transaction inside it just runs. */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.holder !== null && this.context.getStore() === this.holder) return work();
    while (this.holder !== null) await this.turn();
    const token = Symbol('transaction');
    this.holder = token;
    try {
      return await this.context.run(token, work);
    } finally {
      this.holder = null;
      // Node 20 tracks every promise of the process while an AsyncLocalStorage is enabled
      // (about 10 µs of a GET); between transactions no one asks, and run() enables it again.
      this.context.disable();
      this.waiting.splice(0).forEach((wake) => wake());
    }
  }

  /** Before any query: outside the open transaction, wait until it has ended. */
  async query(): Promise<void> {
    while (this.holder !== null && this.context.getStore() !== this.holder) await this.turn();
  }

  private turn(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Puts the gate in front of the data source's transactions and its one query runner. */
  static install(dataSource: DataSource): SqliteTransactionGate {
    const gate = new SqliteTransactionGate();
    const manager: EntityManager = dataSource.manager;
    const transaction = manager.transaction.bind(manager) as (...args: unknown[]) => Promise<unknown>;
    manager.transaction = ((...args: unknown[]) =>
      gate.transaction(() => transaction(...args))) as EntityManager['transaction'];
    const runner = dataSource.driver.createQueryRunner('master');
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    runner.query = (async (...args: unknown[]) => {
      await gate.query();
      return query(...args);
    }) as typeof runner.query;
    installed.set(dataSource, gate);
    return gate;
  }

  /** The gate installed on this data source, if it is SQLite's. */
  static of(dataSource: DataSource): SqliteTransactionGate | undefined {
    return installed.get(dataSource);
  }
}
