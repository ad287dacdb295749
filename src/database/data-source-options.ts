import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { migrations } from '../../migrations';
import type { DatabaseConfig } from '../config/app-config';

/**
 * Never `synchronize`: the migrations are the only schema writer. `queryTimeoutMs` bounds a
 * new MySQL connection's handshake and SQLite's wait for a lock another process holds (the
 * MySQL query deadline itself is query-deadline.ts).
 */
export function dataSourceOptions(database: DatabaseConfig, queryTimeoutMs: number): DataSourceOptions {
  const common = { synchronize: false, migrations, migrationsRun: false, logging: false } as const;
  if (database.type === 'sqlite') {
    if (database.path !== ':memory:') mkdirSync(dirname(database.path), { recursive: true });
    return {
      ...common,
      type: 'better-sqlite3',
      database: database.path,
      // WAL lets readers go on while one writer commits; foreign keys are off by default in SQLite.
      prepareDatabase: (db: { pragma(source: string): unknown }) => {
        db.pragma('journal_mode = WAL');
        db.pragma('foreign_keys = ON');
        // 64 MB of page cache instead of 2: a catalogue search at 100,000 plugins reads rows of
        // three tables, and with the default it read the same pages from the OS again each time.
        db.pragma('cache_size = -65536');
        // A write lock held elsewhere (svc-admin, a backup) is waited for this long, then the
        // request answers 503; better-sqlite3 waits on the event loop, so it is kept short.
        db.pragma(`busy_timeout = ${Math.min(queryTimeoutMs, 5000)}`);
      },
    };
  }
  return {
    ...common,
    type: 'mysql',
    host: database.host,
    port: database.port,
    username: database.username,
    password: database.password,
    database: database.database,
    charset: 'utf8mb4_unicode_ci',
    // Dates are UTC in the database whatever the server's zone.
    timezone: 'Z',
    connectTimeout: queryTimeoutMs,
    extra: { connectionLimit: 10 },
  };
}
