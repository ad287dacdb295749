import type { ObjectLiteral, Repository } from 'typeorm';

/**
 * A value as the driver stores it in the column behind `property` (a Date becomes SQLite's
 * UTC text or MySQL's DATETIME), for comparisons in hand-written conditions, which TypeORM
 * passes through unconverted.
 */
export function persistedValue<T extends ObjectLiteral>(
  repository: Repository<T>,
  property: string,
  value: unknown,
): unknown {
  const column = repository.metadata.findColumnWithPropertyName(property);
  if (!column) throw new Error(`${repository.metadata.name} has no column for ${property}`);
  return repository.manager.connection.driver.preparePersistentValue(value, column);
}
