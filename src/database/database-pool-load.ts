import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Metrics, type DatabasePoolLoad } from '../metrics/metrics';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

/** mysql2's pool, as much of it as the metrics read: it keeps no public counts (fields of mysql2 3.x). */
interface Mysql2Pool {
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
}

function mysqlPoolLoad(dataSource: DataSource): DatabasePoolLoad | null {
  const pool = (dataSource.driver as unknown as { pool?: Mysql2Pool }).pool;
  if (pool?._allConnections === undefined || !dataSource.isInitialized) return null;
  const idle = pool._freeConnections?.length ?? 0;
  return { busy: pool._allConnections.length - idle, idle, waiting: pool._connectionQueue?.length ?? 0 };
}

/** Shows the database's connections to the metrics: mysql2's pool, or SQLite's one connection behind its gate. */
@Injectable()
export class DatabasePoolLoadWatch {
  constructor(@InjectDataSource() dataSource: DataSource, metrics: Metrics) {
    const gate = SqliteTransactionGate.of(dataSource);
    metrics.watchDatabasePool(() => (gate ? gate.load : mysqlPoolLoad(dataSource)));
  }
}
