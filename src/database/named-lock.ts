import { randomUUID } from 'node:crypto';
import type { DataSource, QueryRunner } from 'typeorm';
import { isDeadlock } from './deadlock';

/** How long a start waits for another replica's turn before giving up. */
export const NAMED_LOCK_WAIT_SECONDS = 120;

/**
 * A holder that stops renewing its lease (killed mid-migration) loses the lock after this
 * long; a live holder renews it every third of it, from a connection of its own.
 */
export const NAMED_LOCK_LEASE_MS = 30_000;
const POLL_MS = 250;

/** A lock's name (its row in the lock table), and what it guards in words, for the error a timeout raises. */
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
 * The table of lock rows. It is created here rather than by a migration because it guards
 * the migrations themselves (as TypeORM creates its own `migrations` table); IF NOT EXISTS
 * makes replicas that create it at once harmless to each other.
 */
export const LOCK_TABLE = 'svc_api_locks';

/**
 * Runs `work` while holding a lock row, so processes that do the same work at once (replicas
 * starting together) take turns, also on a Galera cluster: MySQL's GET_LOCK is local to one
 * server, and Galera does not replicate it, so two replicas on two nodes would both get it.
 * A row is replicated: the lock is taken by one conditional UPDATE that commits on its own
 * (a rival's on another node either finds the row taken or loses certification), and held
 * as a lease, so it is not held inside a transaction, where the DDL of a migration could not
 * run (DDL commits at once, and Galera replicates it in total order, TOI). `work` gets a
 * query runner of its own. SQLite has a single writer, so there `work` just runs.
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
    const holder = randomUUID();
    await acquire(lockHolder, lock, holder, waitSeconds);
    const renewal = setInterval(() => {
      void renew(dataSource, lock, holder).catch(() => undefined);
    }, NAMED_LOCK_LEASE_MS / 3);
    try {
      return await work(lockHolder);
    } finally {
      clearInterval(renewal);
      await lockHolder
        .query(`UPDATE ${LOCK_TABLE} SET holder = NULL, expires_at = 0 WHERE name = ? AND holder = ?`, [
          lock.name,
          holder,
        ])
        .catch(() => undefined);
    }
  } finally {
    await lockHolder.release();
  }
}

async function acquire(runner: QueryRunner, lock: NamedLock, holder: string, waitSeconds: number) {
  await runner.query(
    `CREATE TABLE IF NOT EXISTS ${LOCK_TABLE} (` +
      'name VARCHAR(64) NOT NULL PRIMARY KEY, holder VARCHAR(36) NULL, expires_at BIGINT NOT NULL DEFAULT 0' +
      ') ENGINE=InnoDB',
  );
  await runner.query(`INSERT IGNORE INTO ${LOCK_TABLE} (name, holder, expires_at) VALUES (?, NULL, 0)`, [
    lock.name,
  ]);
  const giveUpAt = Date.now() + waitSeconds * 1000;
  for (;;) {
    const now = Date.now();
    if (await take(runner, lock, holder, now)) return;
    if (now >= giveUpAt) throw new NamedLockTimeoutError(lock);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Free, or its holder's lease ran out: one conditional UPDATE takes it. */
async function take(runner: QueryRunner, lock: NamedLock, holder: string, now: number): Promise<boolean> {
  try {
    const result = (await runner.query(
      `UPDATE ${LOCK_TABLE} SET holder = ?, expires_at = ? WHERE name = ? AND (holder IS NULL OR expires_at < ?)`,
      [holder, now + NAMED_LOCK_LEASE_MS, lock.name, now],
    )) as { affectedRows?: number };
    return result.affectedRows === 1;
  } catch (error) {
    if (isDeadlock(error)) return false; // a rival on another node took it first
    throw error;
  }
}

function renew(dataSource: DataSource, lock: NamedLock, holder: string): Promise<unknown> {
  return dataSource.query(`UPDATE ${LOCK_TABLE} SET expires_at = ? WHERE name = ? AND holder = ?`, [
    Date.now() + NAMED_LOCK_LEASE_MS,
    lock.name,
    holder,
  ]);
}
