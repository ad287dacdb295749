import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { dumpMysql, loadMysqlDump, mysqlTableNames } from './mysql-dump';
import type { SnapshotQuery } from './snapshot';
import { copySqlite, restoreSqlite, sqliteTables } from './sqlite-copy';

export type { SnapshotQuery } from './snapshot';

export type DatabaseKind = 'sqlite' | 'mysql';
/** The database's file in a backup, by kind. */
export const COPY_FILE: Record<DatabaseKind, string> = {
  sqlite: 'svc.sqlite',
  mysql: 'mysql-dump.jsonl',
};

/**
 * One consistent copy of the database the service runs on, and the way back into an empty
 * one (svc-admin backup and restore). SQLite: the online backup API; MySQL/MariaDB: a dump
 * read in one consistent-snapshot transaction.
 */
@Injectable()
export class DatabaseCopy {
  readonly kind: DatabaseKind;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.kind = config.database.type;
  }

  /** Copies the database into `directory` (COPY_FILE) and runs `read` on the same snapshot. */
  copyInto<T>(directory: string, read: (query: SnapshotQuery) => Promise<T>): Promise<T> {
    const target = join(directory, COPY_FILE[this.kind]);
    const database = this.config.database;
    return database.type === 'sqlite'
      ? copySqlite(this.dataSource, target, read)
      : dumpMysql(database, target, read);
  }

  /** The tables the database holds now: restore goes only into a database without any. */
  tables(): Promise<string[]> {
    const database = this.config.database;
    return database.type === 'sqlite' ? sqliteTables(this.dataSource) : mysqlTableNames(database);
  }

  /** Loads the copy in `directory` into this (empty) database. */
  async restoreFrom(directory: string): Promise<void> {
    const database = this.config.database;
    if (database.type === 'sqlite') await restoreSqlite(join(directory, COPY_FILE.sqlite), database.path);
    else await loadMysqlDump(database, join(directory, COPY_FILE.mysql));
  }
}
