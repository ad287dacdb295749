import type { DataSource, QueryRunner } from 'typeorm';

/**
 * The write lost to another: InnoDB chose it as a deadlock victim, or (Galera) the cluster
 * refused it at commit because a write certified first on another node touched the same row
 * (certification conflict) or aborted it to apply such a write (brute-force abort). Galera
 * reports all of these as error 1213, and each rolls the whole transaction back, so running
 * it again from its start is safe: its first run left no effect.
 */
export function isDeadlock(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    const { code, errno, driverError } = current as {
      code?: unknown;
      errno?: unknown;
      driverError?: unknown;
    };
    if (code === 'ER_LOCK_DEADLOCK' || errno === 1213) return true;
    current = driverError;
  }
  return false;
}

/** Runs of a conflicting write, the first included; past them the conflict answers 503. */
export const WRITE_CONFLICT_ATTEMPTS = 5;

/**
 * Runs `work` (a whole transaction, or a statement that commits on its own) again while it
 * loses to a concurrent write, a bounded number of times, with a short random pause so the
 * rivals do not meet again at once. The last conflict is thrown as it is (a 503: see
 * common/database-unavailable.ts).
 */
export async function retryOnDeadlock<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= WRITE_CONFLICT_ATTEMPTS || !isDeadlock(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * 5 + Math.random() * 10 * attempt));
    }
  }
}

/**
 * Every statement that runs outside a transaction (autocommit) and loses a conflict is run
 * again here, in one place for every repository: it was rolled back alone. Statements inside
 * a transaction are not: the conflict rolled back the whole transaction, which
 * Transactions.run starts again. MySQL only; SQLite has one writer and no such conflicts.
 */
export function installAutocommitRetry(dataSource: DataSource): void {
  if (dataSource.options.type !== 'mysql') return;
  const driver = dataSource.driver;
  const createQueryRunner = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode) => {
    const runner = createQueryRunner(mode);
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    runner.query = ((...args: unknown[]) =>
      runner.isTransactionActive
        ? query(...args)
        : retryOnDeadlock(() => query(...args))) as QueryRunner['query'];
    return runner;
  };
}
