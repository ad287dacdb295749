import { chmod } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { DataSource } from 'typeorm';
import type { SnapshotQuery } from './snapshot';

/** The part of better-sqlite3 (the driver TypeORM runs here) the copy uses; it ships no types. */
interface SqliteDatabase {
  backup(file: string, options?: { progress?: () => number }): Promise<unknown>;
  pragma(source: string): unknown;
  prepare(sql: string): { all(...parameters: unknown[]): unknown[] };
  close(): void;
}
type SqliteOpen = new (
  file: string,
  options?: { readonly?: boolean; fileMustExist?: boolean },
) => SqliteDatabase;
const Sqlite = createRequire(__filename)('better-sqlite3') as SqliteOpen;

/** sqlite3_backup_step's page count for "all that remain" (better-sqlite3 caps a step at this). */
const ALL_PAGES = 0x7fffffff;

const connectionOf = (dataSource: DataSource): SqliteDatabase =>
  (dataSource.driver as unknown as { databaseConnection: SqliteDatabase }).databaseConnection;

/**
 * SQLite's online backup API on the service's own driver, in one step: one read transaction,
 * which in WAL mode never blocks a writer (steps of a few pages would start again after every
 * commit of the API, and under a burst of uploads might never finish). The copy is then made a
 * self-contained file (rollback journal, no -wal beside it) and `read` runs on it, so what the
 * backup says of the rows is what the copy holds.
 */
export async function copySqlite<T>(
  dataSource: DataSource,
  target: string,
  read: (query: SnapshotQuery) => Promise<T>,
): Promise<T> {
  await connectionOf(dataSource).backup(target, { progress: () => ALL_PAGES });
  // It holds password hashes and tokens' records: for the backup's owner only.
  await chmod(target, 0o600);
  const copy = new Sqlite(target, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
    return await read((sql) => Promise.resolve(copy.prepare(sql).all() as Array<Record<string, unknown>>));
  } finally {
    copy.close();
  }
}

/** The tables of the database the data source has open (SQLite's own excepted). */
export async function sqliteTables(dataSource: DataSource): Promise<string[]> {
  const rows = (await dataSource.query(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  )) as Array<{ name: string }>;
  return rows.map((row) => row.name);
}

/**
 * The backup's copy into the (empty) database at `target`, again through the backup API: the
 * data source's own connection on that file sees the pages as SQLite writes them.
 */
export async function restoreSqlite(copyFile: string, target: string): Promise<void> {
  const copy = new Sqlite(copyFile, { readonly: true, fileMustExist: true });
  try {
    await copy.backup(target, { progress: () => ALL_PAGES });
  } finally {
    copy.close();
  }
}
