import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { destroyConnection, withDeadline, type PooledConnection } from './query-deadline';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

/** The part of better-sqlite3 used here (its types are not installed; TypeORM holds the connection). */
interface SqliteStatement {
  readonly reader: boolean;
  all(...parameters: unknown[]): unknown[];
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}

/** mysql2's pooled connection with its callback API, and TypeORM's driver that lends it. */
type MysqlCallback = (error: Error | null, rows: unknown) => void;
interface MysqlConnection extends PooledConnection {
  query(sql: string, values: unknown[], callback: MysqlCallback): void;
  execute(sql: string, values: unknown[], callback: MysqlCallback): void;
  release(): void;
}
interface MysqlDriver {
  obtainMasterConnection(): Promise<MysqlConnection>;
}

/** As many statements as TypeORM's own cache keeps; the hot reads are a handful. */
const STATEMENT_CACHE_SIZE = 100;

/**
 * The reads of the busiest answers (the guard's token owner on every authenticated request,
 * GET sessions, the catalogue's pages), as plain rows. On SQLite they run on a statement
 * prepared once, straight on TypeORM's connection and behind the same transaction gate:
 * TypeORM's query runner spends more per query (a query result, the broadcaster's events,
 * three awaits) than SQLite spends on such a statement. On MySQL they run on a connection of
 * TypeORM's pool through mysql2's callback API, under the same query deadline as TypeORM's
 * queries: its promise API loads a module and captures a stack on every query. The logger sees
 * them as it sees TypeORM's, and a failure is TypeORM's QueryFailedError. See
 * docs/decisions/plain-reads.md.
 */
@Injectable()
export class PlainReads {
  private readonly sqlite: { gate: SqliteTransactionGate; connection: SqliteConnection } | null;
  private readonly statements = new Map<string, SqliteStatement>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'databaseQueryTimeoutMs'>,
  ) {
    const gate = SqliteTransactionGate.of(dataSource);
    this.sqlite = gate
      ? {
          gate,
          connection: (dataSource.driver as unknown as { databaseConnection: SqliteConnection })
            .databaseConnection,
        }
      : null;
  }

  /** The rows of one SELECT statement with `?` placeholders. */
  rows<T>(sql: string, parameters: unknown[]): Promise<T[]> {
    if (!this.sqlite) return this.mysqlRows(sql, parameters, false) as Promise<T[]>;
    return this.sqliteRows(this.sqlite.gate, sql, parameters) as Promise<T[]>;
  }

  /**
   * As `rows`, for a statement whose text is fixed (one per call site) and whose parameters are
   * strings: on MySQL it is prepared once per connection (mysql2's `execute` and its statement
   * cache), so the server does not parse it again on every request. Variable texts (IN lists)
   * would fill that cache, and mysql2 binds numbers as doubles, so both stay with `rows`.
   */
  fixedRows<T>(sql: string, parameters: readonly string[]): Promise<T[]> {
    if (!this.sqlite) return this.mysqlRows(sql, [...parameters], true) as Promise<T[]>;
    return this.sqliteRows(this.sqlite.gate, sql, [...parameters]) as Promise<T[]>;
  }

  /**
   * As TypeORM's runner queries (query-deadline.ts): past the deadline the connection is
   * destroyed, not returned to the pool. A plain SELECT takes no locks, so it cannot lose a
   * deadlock and needs no retry.
   */
  private mysqlRows(sql: string, parameters: unknown[], prepared: boolean): Promise<unknown[]> {
    const driver = this.dataSource.driver as unknown as MysqlDriver;
    const logger = this.dataSource.logger;
    let dropped = false;
    const connecting = driver.obtainMasterConnection();
    const work = connecting.then(
      (connection) =>
        new Promise<unknown[]>((resolve, reject) => {
          if (dropped) return reject(new Error('dropped past the query deadline'));
          logger.logQuery(sql, parameters);
          const answered: MysqlCallback = (error, rows) => {
            connection.release(); // nothing once destroyed
            if (!error) return resolve(rows as unknown[]);
            logger.logQueryError(error, sql, parameters);
            reject(new QueryFailedError(sql, parameters, error));
          };
          if (prepared) connection.execute(sql, parameters, answered);
          else connection.query(sql, parameters, answered);
        }),
    );
    return withDeadline(this.config.databaseQueryTimeoutMs, sql, work, () => {
      dropped = true;
      void connecting.then(destroyConnection, () => undefined);
    });
  }

  private async sqliteRows(
    gate: SqliteTransactionGate,
    sql: string,
    parameters: unknown[],
  ): Promise<unknown[]> {
    await gate.query();
    // better-sqlite3 binds no booleans (TypeORM turns them into 0/1 the same way).
    const bound = parameters.map((value) => (typeof value === 'boolean' ? Number(value) : value));
    const logger = this.dataSource.logger;
    logger.logQuery(sql, bound);
    try {
      return this.statement(sql).all(...bound);
    } catch (error) {
      logger.logQueryError(error as Error, sql, bound);
      throw new QueryFailedError(sql, bound, error as Error);
    }
  }

  private statement(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (statement) return statement;
    statement = this.sqlite!.connection.prepare(sql);
    if (!statement.reader) throw new Error('PlainReads runs statements that read, and only those');
    this.statements.set(sql, statement);
    // First in, first out, as TypeORM's cache: only a caller building SQL text anew would reach it.
    if (this.statements.size > STATEMENT_CACHE_SIZE)
      this.statements.delete(this.statements.keys().next().value!);
    return statement;
  }
}
