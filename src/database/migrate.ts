import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { NamedLock, withNamedLock } from './named-lock';

const MIGRATION_LOCK: NamedLock = { name: 'svc_api_migrations', guards: 'migration' };

/**
 * Applies pending migrations. On MySQL a named lock makes replicas that start together take
 * turns, so no migration runs twice; SQLite has a single writer anyway.
 */
export async function migrate(dataSource: DataSource): Promise<void> {
  const logger = new Logger('Migrations');
  await withNamedLock(dataSource, MIGRATION_LOCK, async () => {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    for (const migration of applied) logger.log(`Applied ${migration.name}`);
  });
}
