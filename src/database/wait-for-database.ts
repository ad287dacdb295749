import mysql from 'mysql2/promise';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DataSource } from 'typeorm';
import type { DatabaseConfig } from '../config/app-config';

/** The start gave up on the database; the message is the one line an operator reads. */
export class DatabaseUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseUnreachableError';
  }
}

export interface WaitOptions {
  /** How long to keep trying (DATABASE_STARTUP_WAIT_SECONDS); 0 tries once. */
  waitMs: number;
  /** The bound on one try's connection (DATABASE_QUERY_TIMEOUT_SECONDS). */
  attemptTimeoutMs: number;
  /** One line per failed try. */
  onRetry: (line: string) => void;
}

/**
 * Answers that another try cannot change: the server said no. Retried are only the faults
 * that heal (refused, unreachable, timeout, name lookup, too many connections, SQLite paths a
 * volume mounted later makes usable).
 */
const PERMANENT_MYSQL_ERRORS = new Set([
  'ER_BAD_DB_ERROR',
  'ER_ACCESS_DENIED_ERROR',
  'ER_DBACCESS_DENIED_ERROR',
]);

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 5_000;

/**
 * Before the app is built: tries the database until it answers, backing off from 0.5 s to
 * 5 s between tries, so a database that comes up after the API (a container starting
 * beside it) is waited for. Past `waitMs` it throws DatabaseUnreachableError naming the
 * last cause (refused, unreachable, an unusable SQLite path); an unknown database or a
 * denied access is thrown at the first try.
 */
export async function waitForDatabase(database: DatabaseConfig, options: WaitOptions): Promise<void> {
  const giveUpAt = performance.now() + options.waitMs;
  for (let attempt = 1; ; attempt += 1) {
    let cause: string;
    try {
      await tryOnce(database, options.attemptTimeoutMs);
      return;
    } catch (error) {
      cause = describeFailure(database, error);
      if (PERMANENT_MYSQL_ERRORS.has(String((error as { code?: unknown }).code))) {
        throw new DatabaseUnreachableError(cause);
      }
    }
    const left = giveUpAt - performance.now();
    if (left <= 0) {
      const tries = attempt === 1 ? '1 try' : `${attempt} tries`;
      throw new DatabaseUnreachableError(`${cause} (gave up after ${tries} in ${seconds(options.waitMs)} s)`);
    }
    const delay = Math.min(FIRST_DELAY_MS * 2 ** (attempt - 1), MAX_DELAY_MS, left);
    options.onRetry(`Database not ready (try ${attempt}): ${cause}; next try in ${seconds(delay)} s`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

async function tryOnce(database: DatabaseConfig, timeoutMs: number): Promise<void> {
  if (database.type === 'sqlite') {
    if (database.path === ':memory:') return;
    mkdirSync(dirname(database.path), { recursive: true });
    const sqlite = await new DataSource({
      type: 'better-sqlite3',
      database: database.path,
      timeout: timeoutMs,
    }).initialize();
    try {
      // Takes the write lock and lets it go: a read-only file or directory fails here.
      await sqlite.query('BEGIN IMMEDIATE');
      await sqlite.query('ROLLBACK');
    } finally {
      await sqlite.destroy();
    }
    return;
  }
  const connection = await mysql.createConnection({
    host: database.host,
    port: database.port,
    user: database.username,
    password: database.password,
    database: database.database,
    connectTimeout: timeoutMs,
  });
  try {
    await connection.query({ sql: 'SELECT 1', timeout: timeoutMs });
  } finally {
    connection.destroy();
  }
}

const seconds = (ms: number) => String(Math.round(ms / 100) / 10);

/** One sentence naming the cause, with what to do about it where that is clear. */
export function describeFailure(database: DatabaseConfig, error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (database.type === 'sqlite') {
    const reason =
      {
        EACCES: 'permission denied',
        EPERM: 'permission denied',
        ENOTDIR: 'a part of the path is a file, not a directory',
        EEXIST: 'a part of the path is a file, not a directory',
        EROFS: 'the file system is read-only',
        ENOENT: 'a part of the path does not exist and cannot be created',
        SQLITE_CANTOPEN: 'the file cannot be opened or created',
        SQLITE_READONLY: 'the file or its directory is read-only',
        SQLITE_NOTADB: 'the file is not an SQLite database',
        SQLITE_BUSY: 'another process holds its write lock',
      }[String(code)] ?? (error instanceof Error ? error.message : String(error));
    return `SQLite database path ${database.path} is unusable: ${reason}`;
  }
  const server = `${database.host}:${database.port}`;
  switch (code) {
    case 'ER_BAD_DB_ERROR':
      return (
        `Database "${database.database}" does not exist on ${server}; create it with ` +
        `CREATE DATABASE \`${database.database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`
      );
    case 'ER_ACCESS_DENIED_ERROR':
      return `Access denied for user "${database.username}" on ${server}: check the user and password in DATABASE_URL`;
    case 'ER_DBACCESS_DENIED_ERROR':
      return `Access denied for user "${database.username}" to database "${database.database}" on ${server}: grant it with GRANT ALL ON \`${database.database}\`.* TO '${database.username}'@'%'`;
    case 'ECONNREFUSED':
      return `Connection refused by ${server}: is the database server running on that port?`;
    case 'ETIMEDOUT':
      return `No answer from ${server} in time: the host is down, unreachable or a firewall drops the connection`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `Host ${database.host} is unreachable`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Host name ${database.host} cannot be resolved`;
    case 'ER_CON_COUNT_ERROR':
      return `${server} has too many connections`;
    default:
      return `Cannot reach the database on ${server}: ${error instanceof Error ? error.message : String(error)}`;
  }
}
