import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { QueryRunner } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from '../metrics/metrics';

/** The code isDatabaseUnavailable knows a query past its deadline by. */
export const QUERY_DEADLINE_EXCEEDED = 'QUERY_DEADLINE_EXCEEDED';

export class QueryDeadlineError extends Error {
  readonly code = QUERY_DEADLINE_EXCEEDED;

  constructor(ms: number, sql: unknown) {
    // The statement's first words (placeholders, never values) tell the log which query it was.
    const statement = typeof sql === 'string' ? sql.replace(/\s+/g, ' ').slice(0, 60) : '?';
    super(`The database did not answer within ${ms} ms (${statement}); the connection was dropped`);
    this.name = 'QueryDeadlineError';
  }
}

/**
 * Migrations in progress. A count, not an async context: they run at start-up before anything
 * else queries, and an AsyncLocalStorage would turn on Node's promise hooks for the whole
 * process, a cost on every request that follows.
 */
let exemptions = 0;

/** Migrations may take as long as they take: queries run while `work` runs have no deadline. */
export async function withoutQueryDeadline<T>(work: () => Promise<T>): Promise<T> {
  exemptions += 1;
  try {
    return await work();
  } finally {
    exemptions -= 1;
  }
}

/** mysql2's pooled connection, as much of it as is needed here. */
export interface PooledConnection {
  destroy(): void;
  stream?: { destroy(): void };
}

/** TypeORM's MysqlQueryRunner keeps its pooled connection in these (public) fields. */
type MysqlQueryRunner = QueryRunner & {
  databaseConnection?: PooledConnection;
  databaseConnectionPromise?: Promise<PooledConnection>;
};

/**
 * Gives every MySQL query, from asking the pool for a connection to the last row, `ms` to
 * finish. A server that stops answering (frozen, or behind a partition) keeps sockets open
 * without a word, so without a deadline a request waits as long as the silence lasts; with
 * it the query fails with QueryDeadlineError (a 503) and its connection is destroyed, not
 * returned to the pool, where the next request would wait on it again. mysql2's own query
 * `timeout` leaves the connection in the pool, busy with the unanswered query, so it is not
 * used. SQLite has its busy_timeout instead (see data-source-options.ts).
 */
export function installQueryDeadline(
  dataSource: DataSource,
  ms: number,
  onOverrun: () => void = () => undefined,
): void {
  if (dataSource.options.type !== 'mysql') return;
  const driver = dataSource.driver;
  const createQueryRunner = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode) => {
    const runner = createQueryRunner(mode) as MysqlQueryRunner;
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    let dropped = false;
    runner.query = (async (...args: unknown[]) => {
      // Once its connection is dropped, the runner fails at once: a transaction's ROLLBACK
      // would otherwise wait out a second deadline for a connection still on its way.
      if (dropped) throw new QueryDeadlineError(ms, args[0]);
      if (exemptions > 0) return query(...args);
      return withDeadline(ms, args[0], query(...args), () => {
        dropped = true;
        onOverrun();
        dropConnection(runner);
      });
    }) as QueryRunner['query'];
    return runner;
  };
}

/** `work` fails with QueryDeadlineError past `ms`, and `onOverrun` drops its connection. */
export function withDeadline<T>(
  ms: number,
  sql: unknown,
  work: Promise<T>,
  onOverrun: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onOverrun();
      reject(new QueryDeadlineError(ms, sql));
    }, ms);
  });
  // The race also handles `work`'s own failure once it has lost, so nothing goes unhandled.
  return Promise.race([work, overrun]).finally(() => clearTimeout(timer));
}

/** The connection of an overrun query is closed for good. */
export function destroyConnection(connection: PooledConnection): void {
  connection.destroy(); // out of the pool; a waiting request gets a new connection
  connection.stream?.destroy(); // and the socket closed now, failing the unanswered command
}

/** The runner's connection, now or when the pool hands it over. */
function dropConnection(runner: MysqlQueryRunner): void {
  if (runner.databaseConnection) destroyConnection(runner.databaseConnection);
  else void runner.databaseConnectionPromise?.then(destroyConnection, () => undefined);
}

/** Puts the deadline in place once the data source exists (after the start's migrations). */
@Injectable()
export class QueryDeadline {
  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    metrics: Metrics,
  ) {
    installQueryDeadline(dataSource, config.databaseQueryTimeoutMs, () => metrics.queryDeadlineHits.inc());
  }
}
