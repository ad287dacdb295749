import { QueryFailedError } from 'typeorm';
import { isDuplicateKeyError, isForeignKeyError, isIntegrityError } from './integrity-error';

/** A driver's error as TypeORM wraps it: only its `code` matters here. */
const failed = (code: string): QueryFailedError =>
  new QueryFailedError('INSERT ...', [], Object.assign(new Error(code), { code }));

describe('integrity errors, told apart by the driver code on SQLite and MySQL alike', () => {
  it.each(['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY'])(
    '%s is a duplicate key, and an integrity error',
    (code) => {
      expect(isDuplicateKeyError(failed(code))).toBe(true);
      expect(isForeignKeyError(failed(code))).toBe(false);
      expect(isIntegrityError(failed(code))).toBe(true);
    },
  );

  it.each(['ER_NO_REFERENCED_ROW', 'ER_NO_REFERENCED_ROW_2', 'SQLITE_CONSTRAINT_FOREIGNKEY'])(
    '%s is a missing referenced row, not a duplicate',
    (code) => {
      expect(isForeignKeyError(failed(code))).toBe(true);
      expect(isDuplicateKeyError(failed(code))).toBe(false);
      expect(isIntegrityError(failed(code))).toBe(true);
    },
  );

  it.each(['ER_BAD_NULL_ERROR', 'SQLITE_CONSTRAINT_NOTNULL', 'ER_ROW_IS_REFERENCED_2'])(
    '%s is an integrity error of neither kind',
    (code) => {
      expect(isIntegrityError(failed(code))).toBe(true);
      expect(isDuplicateKeyError(failed(code))).toBe(false);
      expect(isForeignKeyError(failed(code))).toBe(false);
    },
  );

  it('ignores other failures: a lost connection, a syntax error, an error that is no query failure', () => {
    for (const error of [
      failed('ECONNRESET'),
      failed('ER_PARSE_ERROR'),
      failed('SQLITE_BUSY'),
      Object.assign(new Error('dup'), { code: 'ER_DUP_ENTRY' }),
      'ER_DUP_ENTRY',
      undefined,
    ]) {
      expect(isDuplicateKeyError(error)).toBe(false);
      expect(isIntegrityError(error)).toBe(false);
    }
  });
});
