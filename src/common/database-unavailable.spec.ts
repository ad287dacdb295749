import { QueryFailedError } from 'typeorm';
import { QueryDeadlineError } from '../database/query-deadline';
import { isDatabaseUnavailable } from './database-unavailable';

describe('isDatabaseUnavailable', () => {
  const driverError = (fields: object) => Object.assign(new Error('driver'), fields);

  it.each([
    ['a refused connection', driverError({ code: 'ECONNREFUSED' })],
    [
      'a lost connection inside a query error',
      new QueryFailedError('SELECT 1', [], driverError({ code: 'PROTOCOL_CONNECTION_LOST' })),
    ],
    ['server gone away by number', driverError({ errno: 2006 })],
    ['a busy SQLite file', driverError({ code: 'SQLITE_BUSY' })],
    ['a busy SQLite file, extended code', driverError({ code: 'SQLITE_BUSY_SNAPSHOT' })],
    ['a query past its deadline', new QueryDeadlineError(5000, 'SELECT 1')],
    ['a broken mysql2 connection without a code', driverError({ fatal: true })],
    [
      'a write conflict past its retries (deadlock, Galera certification)',
      new QueryFailedError('COMMIT', [], driverError({ code: 'ER_LOCK_DEADLOCK', errno: 1213 })),
    ],
    ['a Galera node outside the primary component', driverError({ errno: 1047 })],
    ['a cause chain', new Error('outer', { cause: driverError({ code: 'ETIMEDOUT' }) })],
  ])('recognises %s', (_, error) => expect(isDatabaseUnavailable(error)).toBe(true));

  it.each([
    ['a syntax error', new QueryFailedError('SELEC', [], driverError({ code: 'ER_PARSE_ERROR' }))],
    ['a duplicate key', driverError({ code: 'ER_DUP_ENTRY' })],
    ['a constraint on SQLite', driverError({ code: 'SQLITE_CONSTRAINT_UNIQUE' })],
    ['a plain error', new Error('boom')],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('does not take %s for an outage', (_, error) => expect(isDatabaseUnavailable(error)).toBe(false));
});
