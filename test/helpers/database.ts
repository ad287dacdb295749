import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { loadConfig } from '../../src/config/app-config';

/** e2e runs on SQLite unless TEST_DATABASE_URL names a MySQL/MariaDB database. */
export function testDatabaseUrl(): string {
  return (
    process.env.TEST_DATABASE_URL || `sqlite:${join(mkdtempSync(join(tmpdir(), 'svc-e2e-')), 'svc.sqlite')}`
  );
}

/** Every app a test starts begins from an empty schema. SQLite gets a new file instead. */
export async function emptyDatabase(url: string): Promise<void> {
  const database = loadConfig({ DATABASE_URL: url, JWT_SECRET: 'x'.repeat(32) }).database;
  if (database.type !== 'mysql') return;
  const connection = await createConnection({
    host: database.host,
    port: database.port,
    user: database.username,
    password: database.password,
    database: database.database,
  });
  try {
    const [rows] = await connection.query<import('mysql2').RowDataPacket[]>(
      'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()',
    );
    await connection.query('SET FOREIGN_KEY_CHECKS = 0');
    for (const row of rows) await connection.query(`DROP TABLE IF EXISTS \`${String(row.name)}\``);
    await connection.query('SET FOREIGN_KEY_CHECKS = 1');
  } finally {
    await connection.end();
  }
}
