import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';

/**
 * Where services start the transactions that span their repositories: each repository
 * method that writes takes the `manager` of the transaction it joins.
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
    return this.dataSource.transaction(work);
  }

  /** With an isolation level on MySQL; SQLite has one writer and no levels to choose. */
  runIsolated<T>(isolation: IsolationLevel, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.isMysql ? this.dataSource.transaction(isolation, work) : this.dataSource.transaction(work);
  }
}
