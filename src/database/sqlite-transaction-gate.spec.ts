import { DataSource } from 'typeorm';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

async function database(gated: boolean): Promise<DataSource> {
  const dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
  if (gated) SqliteTransactionGate.install(dataSource);
  await dataSource.query('CREATE TABLE rows (name TEXT NOT NULL)');
  return dataSource;
}

const names = async (dataSource: DataSource) =>
  ((await dataSource.query('SELECT name FROM rows ORDER BY name')) as Array<{ name: string }>).map(
    (row) => row.name,
  );

/** A transaction that writes `inside`, calls `wrote`, lets other work run, then rolls back. */
async function rollBackAfterWriting(dataSource: DataSource, wrote: () => void): Promise<void> {
  const failed = dataSource
    .transaction(async (manager) => {
      await manager.query("INSERT INTO rows (name) VALUES ('inside')");
      wrote();
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('changed my mind');
    })
    .catch((error: Error) => error.message);
  expect(await failed).toBe('changed my mind');
}

/**
 * A transaction that rolls back while another request writes: the other write must stay.
 * The outside write is sent after the transaction has written and before it rolls back.
 */
async function rollbackBesideAWrite(dataSource: DataSource): Promise<void> {
  let outside: Promise<unknown> = Promise.resolve();
  let wrote!: () => void;
  const insideWrote = new Promise<void>((resolve) => (wrote = resolve));
  void insideWrote.then(() => {
    outside = dataSource.query("INSERT INTO rows (name) VALUES ('outside')");
  });
  await rollBackAfterWriting(dataSource, wrote);
  await outside;
}

describe('SqliteTransactionGate', () => {
  it('shows the hazard it exists for: without it, a rollback takes another request’s write along', async () => {
    const dataSource = await database(false);
    await rollbackBesideAWrite(dataSource);
    expect(await names(dataSource)).toEqual([]);
    await dataSource.destroy();
  });

  it('keeps writes from outside a transaction out of it, so its rollback undoes only its own', async () => {
    const dataSource = await database(true);
    await rollbackBesideAWrite(dataSource);
    expect(await names(dataSource)).toEqual(['outside']);
    await dataSource.destroy();
  });

  it('runs transactions one after another, each committing its own writes, nested ones inside', async () => {
    const dataSource = await database(true);
    await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        dataSource
          .transaction(async (manager) => {
            await manager.query('INSERT INTO rows (name) VALUES (?)', [name]);
            await new Promise((resolve) => setImmediate(resolve));
            await dataSource.transaction((inner) =>
              inner.query('INSERT INTO rows (name) VALUES (?)', [`${name}-nested`]),
            );
            if (name === 'b') throw new Error('b rolls back');
          })
          .catch(() => undefined),
      ),
    );
    expect(await names(dataSource)).toEqual(['a', 'a-nested', 'c', 'c-nested']);
    await dataSource.destroy();
  });

  it('counts code a transaction left running as outside the next one, so that one’s rollback spares it', async () => {
    const dataSource = await database(true);
    let secondWrote!: () => void;
    const secondOpen = new Promise<void>((resolve) => (secondWrote = resolve));
    let leftover: Promise<unknown> = Promise.resolve();
    await dataSource.transaction(async (manager) => {
      await manager.query("INSERT INTO rows (name) VALUES ('first')");
      // Not awaited: it writes once the first transaction has ended and the second is open.
      leftover = secondOpen.then(() => dataSource.query("INSERT INTO rows (name) VALUES ('leftover')"));
    });
    await rollBackAfterWriting(dataSource, secondWrote);
    await leftover;
    expect(await names(dataSource)).toEqual(['first', 'leftover']);
    await dataSource.destroy();
  });
});
