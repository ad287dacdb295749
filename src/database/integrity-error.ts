import { QueryFailedError } from 'typeorm';

/** MySQL/MariaDB error codes of constraint violations (unique key, foreign key, NOT NULL). */
const MYSQL_INTEGRITY_CODES = new Set([
  'ER_DUP_ENTRY',
  'ER_NO_REFERENCED_ROW',
  'ER_NO_REFERENCED_ROW_2',
  'ER_ROW_IS_REFERENCED',
  'ER_ROW_IS_REFERENCED_2',
  'ER_BAD_NULL_ERROR',
]);

function driverCode(error: unknown): string | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const code = (error.driverError as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A write refused by a constraint of the schema, on SQLite or MySQL. */
export function isIntegrityError(error: unknown): boolean {
  const code = driverCode(error);
  return code !== undefined && (code.startsWith('SQLITE_CONSTRAINT') || MYSQL_INTEGRITY_CODES.has(code));
}

/** A write refused because a unique key already holds the value. */
export function isDuplicateKeyError(error: unknown): boolean {
  const code = driverCode(error);
  return (
    code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/** A write refused because a referenced row is gone. */
export function isForeignKeyError(error: unknown): boolean {
  const code = driverCode(error);
  return (
    code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ||
    code === 'ER_NO_REFERENCED_ROW' ||
    code === 'ER_NO_REFERENCED_ROW_2'
  );
}
