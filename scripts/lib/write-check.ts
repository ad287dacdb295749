import { existsSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { table } from './stats';
import type { Outcome, Write, WriteTable } from './workload';

export function connectionOptions(databaseUrl: string): mysql.ConnectionOptions {
  const url = new URL(databaseUrl);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') {
    throw new Error(`the database must be on loopback, not ${url.hostname}`);
  }
  return {
    host: url.hostname,
    port: url.port ? Number(url.port) : 3306,
    user: decodeURIComponent(url.username) || 'root',
    password: decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.replace(/^\//, '')),
    connectTimeout: 10_000,
  };
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const { database, ...server } = connectionOptions(databaseUrl);
  const connection = await mysql.createConnection(server);
  try {
    await connection.query(`CREATE DATABASE IF NOT EXISTS \`${String(database).replace(/`/g, '``')}\``);
  } finally {
    await connection.end();
  }
}

export interface TableCheck {
  table: WriteTable;
  /** Requests answered 201. */
  acknowledged: number;
  /** Rows of this run in the table. */
  rows: number;
  /** Answered 201, but no row: a lost write. */
  lost: Write[];
  /** A row although the request was not answered 201 (legitimate only when its answer was a 503 or none). */
  unacknowledged: number;
  /** More than one row for one key. */
  duplicated: number;
}

export interface WriteReport {
  tables: TableCheck[];
  /**
   * Plugin rows of the run whose file is not in the plugin directory, whatever their request
   * was answered: a row without its file is a plugin nobody can review.
   */
  missingFiles: string[];
  /**
   * Rows whose request was not answered 201, with the answer it got: when the database dies
   * between its commit and the client hearing of it, the row exists and the answer was a 503
   * (or none). Not a lost write, but worth seeing.
   */
  unacknowledgedRows: Array<{ table: WriteTable; key: string; answer: string; fileOnDisk?: boolean }>;
  /** Users of the run with more than one active session (the sessions service promises at most one). */
  severalActive: string[];
  ok: boolean;
}

const QUERIES: Record<WriteTable, string> = {
  // `default session` is made by a user's first target (it joins the active session), not by a request of its own.
  sessions:
    "SELECT s.name AS k, u.name AS owner, NULL AS file FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.name LIKE ? AND s.name <> 'default session'",
  user_plugins:
    'SELECT p.name AS k, u.name AS owner, p.file_path AS file FROM user_plugins p JOIN users u ON u.id = p.user_id WHERE u.name LIKE ?',
  targets:
    'SELECT t.target_url AS k, u.name AS owner, NULL AS file FROM targets t JOIN users u ON u.id = t.user_id WHERE u.name LIKE ?',
};

const keyOf = (owner: string, key: string) => `${owner}\u0000${key}`;

/**
 * Reads the run's rows straight from the database (not through the API) and compares them
 * with what the API acknowledged: every 201 must have its row, and every acknowledged
 * upload its file.
 */
export async function verifyWrites(
  databaseUrl: string,
  runId: string,
  outcomes: Outcome[],
  pluginDir: string,
): Promise<WriteReport> {
  const connection = await mysql.createConnection(connectionOptions(databaseUrl));
  const ownerPattern = `lt${runId}u%`;
  const report: WriteReport = {
    tables: [],
    missingFiles: [],
    unacknowledgedRows: [],
    severalActive: [],
    ok: true,
  };
  try {
    for (const tableName of Object.keys(QUERIES) as WriteTable[]) {
      const [rows] = await connection.query(QUERIES[tableName], [ownerPattern]);
      const found = new Map<string, { count: number; file: string | null }>();
      for (const row of rows as Array<{ k: string; owner: string; file: string | null }>) {
        const key = keyOf(row.owner, row.k);
        const entry = found.get(key) ?? { count: 0, file: row.file };
        entry.count += 1;
        found.set(key, entry);
      }
      const writes = outcomes.filter((outcome) => outcome.write?.table === tableName);
      const acknowledged = writes
        .filter((outcome) => outcome.status === 201)
        .map((outcome) => outcome.write!);
      const acknowledgedKeys = new Set(acknowledged.map((write) => keyOf(write.owner, write.key)));
      const lost = acknowledged.filter((write) => !found.has(keyOf(write.owner, write.key)));
      if (tableName === 'user_plugins') {
        for (const [key, entry] of found) {
          if (!entry.file || !existsSync(join(pluginDir, entry.file)))
            report.missingFiles.push(key.split('\u0000')[1]);
        }
      }
      const answers = new Map(
        writes.map((outcome) => [
          keyOf(outcome.write!.owner, outcome.write!.key),
          outcome.status === 0 ? `no answer (${outcome.error ?? '?'})` : String(outcome.status),
        ]),
      );
      for (const [key, entry] of found) {
        if (acknowledgedKeys.has(key)) continue;
        report.unacknowledgedRows.push({
          table: tableName,
          key: key.split('\u0000')[1],
          answer: answers.get(key) ?? 'never requested',
          fileOnDisk: entry.file === null ? undefined : existsSync(join(pluginDir, entry.file)),
        });
      }
      report.tables.push({
        table: tableName,
        acknowledged: acknowledged.length,
        rows: (rows as unknown[]).length,
        lost,
        unacknowledged: [...found.keys()].filter((key) => !acknowledgedKeys.has(key)).length,
        duplicated: [...found.values()].filter((entry) => entry.count > 1).length,
      });
    }
    const [active] = await connection.query(
      `SELECT u.name AS owner FROM sessions s JOIN users u ON u.id = s.user_id
       WHERE s.active = 1 AND u.name LIKE ? GROUP BY u.name HAVING COUNT(*) > 1`,
      [ownerPattern],
    );
    report.severalActive = (active as Array<{ owner: string }>).map((row) => row.owner);
  } finally {
    await connection.end();
  }
  report.ok =
    report.tables.every((check) => check.lost.length === 0 && check.duplicated === 0) &&
    report.missingFiles.length === 0 &&
    report.severalActive.length === 0;
  return report;
}

export function printWriteReport(report: WriteReport): void {
  console.log(
    table(
      ['table', 'answered 201', 'rows in db', 'lost', 'rows without 201', 'duplicated keys'],
      report.tables.map((check) => [
        check.table,
        String(check.acknowledged),
        String(check.rows),
        String(check.lost.length),
        String(check.unacknowledged),
        String(check.duplicated),
      ]),
    ),
  );
  for (const check of report.tables) {
    for (const write of check.lost.slice(0, 10))
      console.log(`  LOST ${check.table}: ${write.owner} ${write.key}`);
  }
  console.log(`plugin rows without their file on disk: ${report.missingFiles.length}`);
  for (const name of report.missingFiles.slice(0, 10)) console.log(`  MISSING FILE: ${name}`);
  for (const row of report.unacknowledgedRows.slice(0, 10)) {
    const file = row.fileOnDisk === undefined ? '' : row.fileOnDisk ? ', file on disk' : ', file NOT on disk';
    console.log(`  row without 201: ${row.table} ${row.key} (answer ${row.answer}${file})`);
  }
  console.log(`users with more than one active session: ${report.severalActive.length}`);
}
