import type { DataSource, QueryRunner } from 'typeorm';

/** How long a start waits for another replica's turn before giving up. */
export const NAMED_LOCK_WAIT_SECONDS = 120;

/** A lock's name in MySQL, and what it guards in words, for the error a timeout raises. */
export interface NamedLock {
  name: string;
  guards: string;
}

export class NamedLockTimeoutError extends Error {
  constructor(lock: NamedLock) {
    super(`Timed out waiting for the ${lock.guards} lock`);
    this.name = 'NamedLockTimeoutError';
  }
}

/**
 * Runs `work` while holding a MySQL named lock (GET_LOCK), so processes that do the same
 * work at once (replicas starting together) take turns. The lock belongs to one connection:
 * `work` gets that connection's query runner, and the lock is released on it afterwards
 * (a lost connection releases it too). SQLite has a single writer, so there `work` just runs.
 */
export async function withNamedLock<T>(
  dataSource: DataSource,
  lock: NamedLock,
  work: (lockHolder: QueryRunner) => Promise<T>,
  waitSeconds: number = NAMED_LOCK_WAIT_SECONDS,
): Promise<T> {
  const lockHolder = dataSource.createQueryRunner();
  try {
    if (dataSource.options.type !== 'mysql') return await work(lockHolder);
    const [row] = (await lockHolder.query('SELECT GET_LOCK(?, ?) AS acquired', [lock.name, waitSeconds])) as {
      acquired: number | string | null;
    }[];
    if (Number(row?.acquired) !== 1) throw new NamedLockTimeoutError(lock);
    try {
      return await work(lockHolder);
    } finally {
      await lockHolder.query('SELECT RELEASE_LOCK(?)', [lock.name]).catch(() => undefined);
    }
  } finally {
    await lockHolder.release();
  }
}
