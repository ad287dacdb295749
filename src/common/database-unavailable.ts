import { QUERY_DEADLINE_EXCEEDED } from '../database/query-deadline';

/** Errors that mean the database cannot be reached right now, as opposed to a bad query. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT',
  // A write that still lost to concurrent ones after its retries (deadlock.ts); on Galera,
  // a certification conflict at commit. Rolled back, so the client may simply try again.
  'ER_LOCK_DEADLOCK',
  // Galera: "WSREP has not yet prepared node for application use", a node out of the
  // cluster's primary component (it rejoins by itself).
  'ER_UNKNOWN_COM_ERROR',
  QUERY_DEADLINE_EXCEEDED,
]);

/** Walks the error and its causes (TypeORM wraps the driver's error) looking for such a code. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    const { code, driverError, cause, errno, fatal } = current as {
      fatal?: unknown;
      code?: unknown;
      driverError?: unknown;
      cause?: unknown;
      errno?: unknown;
    };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    // A lock another process holds past busy_timeout, in any of SQLite's extended codes.
    if (typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(code)) return true;
    // mysql2 reports "server has gone away" and "lost connection" by number on some paths.
    if (errno === 2006 || errno === 2013) return true;
    if (errno === 1213 || errno === 1047) return true;
    // mysql2 marks an error that broke the connection as fatal, some without a code
    // ("Can't add new command when connection is in closed state").
    if (fatal === true) return true;
    current = driverError ?? cause;
  }
  return false;
}
