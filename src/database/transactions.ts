import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { retryOnDeadlock } from './deadlock';

/**
 * Where services start the transactions that span their repositories: each repository
 * method that writes takes the `manager` of the transaction it joins.
 *
 * A transaction that loses to a concurrent write (an InnoDB deadlock, or on Galera a
 * certification conflict at commit with a write made on another node) was rolled back
 * whole, so it runs again from the start, a bounded number of times (deadlock.ts). `work`
 * must therefore do nothing but database work through `manager`, or work that is harmless
 * to repeat. Statements outside any transaction are retried likewise, one by one.
 */
@Injectable()
export class Transactions {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Outside any transaction: for writes that commit on their own. */
  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  get isMysql(): boolean {
    return this.dataSource.options.type === 'mysql';
  }

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return retryOnDeadlock(() => this.dataSource.transaction(work));
  }

  /** With an isolation level on MySQL; SQLite has one writer and no levels to choose. */
  runIsolated<T>(isolation: IsolationLevel, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.isMysql
      ? retryOnDeadlock(() => this.dataSource.transaction(isolation, work))
      : this.dataSource.transaction(work);
  }
}
