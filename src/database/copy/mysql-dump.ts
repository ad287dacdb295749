import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createConnection as createCoreConnection, type Connection as CoreConnection } from 'mysql2';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import type { DatabaseConfig } from '../../config/app-config';
import { LOCK_TABLE } from '../named-lock';
import type { SnapshotQuery } from './snapshot';

type MysqlConfig = Extract<DatabaseConfig, { type: 'mysql' }>;

/**
 * The dump's lines, JSON each: first `{format}`, then per table `{table, create, columns}`
 * followed by one array of values per row. Values are as the server sends them in text
 * (dates, decimals and big integers as strings, so nothing is rounded or moved to another
 * zone), binary ones as `{base64}`. Why this and not mysqldump: docs/decisions/backup-format.md.
 */
export const DUMP_FORMAT = 'svc-api mysql dump 1';
const INSERT_BATCH = 200;

interface TableHeader {
  table: string;
  create: string;
  columns: string[];
}
type DumpValue = string | number | null | { base64: string };

const quoteName = (name: string) => `\`${name.replace(/`/g, '``')}\``;

/** A connection of its own (not the pool's): a session with exact text values and UTC. */
async function connect(database: MysqlConfig): Promise<Connection & { core: CoreConnection }> {
  const core = createCoreConnection({
    host: database.host,
    port: database.port,
    user: database.username,
    password: database.password,
    database: database.database,
    charset: 'utf8mb4_unicode_ci',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    decimalNumbers: false,
    jsonStrings: true,
  });
  const connection = Object.assign(core.promise(), { core });
  await connection.query("SET time_zone = '+00:00'");
  return connection;
}

export async function mysqlTables(connection: Connection): Promise<string[]> {
  const [rows] = await connection.query<RowDataPacket[]>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' ORDER BY table_name",
  );
  return rows.map((row) => String(row.name));
}

/** The tables of the database, on a connection of its own (restore's emptiness check). */
export async function mysqlTableNames(database: MysqlConfig): Promise<string[]> {
  const connection = await connect(database);
  try {
    return await mysqlTables(connection);
  } finally {
    await connection.end();
  }
}

const encode = (value: unknown): DumpValue =>
  Buffer.isBuffer(value) ? { base64: value.toString('base64') } : (value as DumpValue);
const decode = (value: DumpValue): unknown =>
  value !== null && typeof value === 'object' ? Buffer.from(value.base64, 'base64') : value;

/**
 * Every table read in one REPEATABLE READ transaction WITH CONSISTENT SNAPSHOT: InnoDB's plain
 * reads take no lock, so the API writes on while the dump reads the state at its start, the
 * same for every table. `read` runs in that transaction too.
 */
export async function dumpMysql<T>(
  database: MysqlConfig,
  target: string,
  read: (query: SnapshotQuery) => Promise<T>,
): Promise<T> {
  const connection = await connect(database);
  const out = createWriteStream(target, { flags: 'wx', mode: 0o600 });
  const write = async (line: unknown) => {
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  };
  try {
    await connection.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await connection.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    await write({ format: DUMP_FORMAT });
    for (const table of await mysqlTables(connection)) {
      const [[created]] = await connection.query<RowDataPacket[]>(`SHOW CREATE TABLE ${quoteName(table)}`);
      const [columns] = await connection.query<RowDataPacket[]>(
        'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position',
        [table],
      );
      const names = columns.map((column) => String(column.name));
      await write({ table, create: String(created['Create Table']), columns: names } satisfies TableHeader);
      // A lock row is a lease of a process of the source; the copy starts with none held.
      if (table === LOCK_TABLE) continue;
      const rows = connection.core
        .query({
          sql: `SELECT ${names.map(quoteName).join(', ')} FROM ${quoteName(table)}`,
          rowsAsArray: true,
        })
        .stream();
      for await (const row of rows as AsyncIterable<unknown[]>) await write(row.map(encode));
    }
    const result = await read(async (sql) => (await connection.query<RowDataPacket[]>(sql))[0]);
    await connection.query('COMMIT');
    out.end();
    await once(out, 'finish');
    return result;
  } finally {
    out.destroy();
    await connection.end();
  }
}

/** The dump's tables (schema as dumped) and rows into an empty database; the API's migrations go on from there. */
export async function loadMysqlDump(database: MysqlConfig, source: string): Promise<void> {
  const connection = await connect(database);
  try {
    // The tables come in name order, not in the order of their foreign keys.
    await connection.query('SET FOREIGN_KEY_CHECKS = 0');
    let header: TableHeader | null = null;
    let batch: unknown[][] = [];
    const flush = async () => {
      if (header === null || batch.length === 0) return;
      await connection.query(
        `INSERT INTO ${quoteName(header.table)} (${header.columns.map(quoteName).join(', ')}) VALUES ?`,
        [batch],
      );
      batch = [];
    };
    let first = true;
    for await (const line of createInterface({ input: createReadStream(source), crlfDelay: Infinity })) {
      const parsed = JSON.parse(line) as { format?: string } | TableHeader | DumpValue[];
      if (first) {
        if ((parsed as { format?: string }).format !== DUMP_FORMAT) {
          throw new Error(`the dump is not in the format ${DUMP_FORMAT}`);
        }
        first = false;
      } else if (Array.isArray(parsed)) {
        batch.push(parsed.map(decode));
        if (batch.length >= INSERT_BATCH) await flush();
      } else {
        await flush();
        header = parsed as TableHeader;
        await connection.query(header.create);
      }
    }
    await flush();
    await connection.query('SET FOREIGN_KEY_CHECKS = 1');
  } finally {
    await connection.end();
  }
}
