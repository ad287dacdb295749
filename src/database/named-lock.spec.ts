import { DataSource } from 'typeorm';
import { withNamedLock } from './named-lock';

const LOCK = { name: 'svc_api_test_lock', guards: 'test' };

/** MySQL's GET_LOCK is exercised on MariaDB by test/database-helpers.e2e-spec.ts; SQLite needs no lock. */
describe('withNamedLock on SQLite', () => {
  let dataSource: DataSource;
  beforeAll(async () => {
    dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
  });
  afterAll(() => dataSource.destroy());

  it('runs the work on a query runner of the data source and hands back its result', async () => {
    const result = await withNamedLock(dataSource, LOCK, async (runner) => {
      expect(runner.connection).toBe(dataSource);
      return (await runner.query('SELECT 41 + 1 AS answer')) as Array<{ answer: number }>;
    });
    expect(result).toEqual([{ answer: 42 }]);
  });

  it('passes the work’s error on', async () => {
    await expect(
      withNamedLock(dataSource, LOCK, () => Promise.reject(new Error('work failed'))),
    ).rejects.toThrow('work failed');
  });
});
