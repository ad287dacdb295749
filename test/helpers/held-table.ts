import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import type { TestApp } from './test-app';

/**
 * Another client of the same database takes a table for itself, as a long migration or a
 * stuck job would: on MySQL a table lock (its reads wait too), on SQLite, which locks the
 * whole file, a write transaction held open (WAL readers go on beside it).
 */
export async function holdTable(t: TestApp, table: string): Promise<{ release: () => Promise<void> }> {
  const database = t.config.database;
  if (database.type === 'sqlite') {
    const other = await new DataSource({ type: 'better-sqlite3', database: database.path }).initialize();
    await other.query('BEGIN IMMEDIATE');
    return {
      release: async () => {
        await other.query('ROLLBACK');
        await other.destroy();
      },
    };
  }
  const other = await createConnection({
    host: database.host,
    port: database.port,
    user: database.username,
    password: database.password,
    database: database.database,
  });
  await other.query(`LOCK TABLES \`${table}\` WRITE`);
  return {
    release: async () => {
      await other.query('UNLOCK TABLES');
      await other.end();
    },
  };
}
