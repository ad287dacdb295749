import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';

const MIGRATION_LOCK = 'svc_api_migrations';
const LOCK_WAIT_SECONDS = 120;

/**
 * Applies pending migrations. On MySQL a named lock makes replicas that start together take
 * turns, so no migration runs twice; SQLite has a single writer anyway.
 */
export async function migrate(dataSource: DataSource): Promise<void> {
  const logger = new Logger('Migrations');
  if (dataSource.options.type !== 'mysql') {
    await runPending(dataSource, logger);
    return;
  }
  const lockHolder = dataSource.createQueryRunner();
  try {
    const [row] = (await lockHolder.query('SELECT GET_LOCK(?, ?) AS acquired', [
      MIGRATION_LOCK,
      LOCK_WAIT_SECONDS,
    ])) as { acquired: number | string | null }[];
    if (Number(row?.acquired) !== 1) throw new Error('Timed out waiting for the migration lock');
    await runPending(dataSource, logger);
  } finally {
    await lockHolder.query('SELECT RELEASE_LOCK(?)', [MIGRATION_LOCK]).catch(() => undefined);
    await lockHolder.release();
  }
}

async function runPending(dataSource: DataSource, logger: Logger): Promise<void> {
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  for (const migration of applied) logger.log(`Applied ${migration.name}`);
}
