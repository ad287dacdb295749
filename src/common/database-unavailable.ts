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
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

/** Walks the error and its causes (TypeORM wraps the driver's error) looking for such a code. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    const { code, driverError, cause, errno } = current as {
      code?: unknown;
      driverError?: unknown;
      cause?: unknown;
      errno?: unknown;
    };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    // mysql2 reports "server has gone away" and "lost connection" by number on some paths.
    if (errno === 2006 || errno === 2013) return true;
    current = driverError ?? cause;
  }
  return false;
}
