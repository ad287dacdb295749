import { DataSource, QueryFailedError } from 'typeorm';
import { PlainReads } from './plain-reads';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

async function database(): Promise<DataSource> {
  const dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
  SqliteTransactionGate.install(dataSource);
  await dataSource.query('CREATE TABLE rows (name TEXT NOT NULL, flag INTEGER NOT NULL DEFAULT 0)');
  return dataSource;
}

describe('PlainReads on SQLite', () => {
  let dataSource: DataSource;
  let reads: PlainReads;
  beforeEach(async () => {
    dataSource = await database();
    reads = new PlainReads(dataSource, { databaseQueryTimeoutMs: 5000 });
  });
  afterEach(() => dataSource.destroy());

  it('reads rows as TypeORM does, booleans bound as 0/1, and the logger sees each statement', async () => {
    await dataSource.query("INSERT INTO rows (name, flag) VALUES ('a', 1), ('b', 0)");
    const logged: string[] = [];
    const logQuery = jest
      .spyOn(dataSource.logger, 'logQuery')
      .mockImplementation((sql) => void logged.push(sql));
    const sql = 'SELECT name FROM rows WHERE flag = ? ORDER BY name';
    expect(await reads.rows(sql, [true])).toEqual(await dataSource.query(sql, [1]));
    expect(await reads.rows(sql, [false])).toEqual([{ name: 'b' }]);
    expect(logged.filter((statement) => statement === sql)).toHaveLength(3);
    logQuery.mockRestore();
  });

  it('waits while a transaction holds the connection, and sees only what it committed', async () => {
    let wrote!: () => void;
    const insideWrote = new Promise<void>((resolve) => (wrote = resolve));
    let read: Promise<unknown[]> = Promise.resolve([]);
    let readInside: unknown[] = [];
    void insideWrote.then(() => (read = reads.rows('SELECT name FROM rows', [])));
    await dataSource
      .transaction(async (manager) => {
        await manager.query("INSERT INTO rows (name) VALUES ('inside')");
        // A read from inside the transaction is not kept waiting by it.
        readInside = await reads.rows('SELECT name FROM rows', []);
        wrote();
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(readInside).toEqual([{ name: 'inside' }]);
    expect(await read).toEqual([]);
  });

  it("fails as TypeORM's QueryFailedError, with SQLite's code, and runs no statement that writes", async () => {
    const missing = await reads.rows('SELECT name FROM nowhere', []).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(QueryFailedError);
    expect((missing as QueryFailedError & { driverError: { code: string } }).driverError.code).toBe(
      'SQLITE_ERROR',
    );
    const write = await reads
      .rows("INSERT INTO rows (name) VALUES ('x')", [])
      .catch((error: unknown) => error);
    expect(String(write)).toMatch(/only those/);
    expect(await dataSource.query('SELECT COUNT(1) AS n FROM rows')).toEqual([{ n: 0 }]);
  });
});
