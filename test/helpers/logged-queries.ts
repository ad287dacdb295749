import type { DataSource, Logger as TypeOrmLogger } from 'typeorm';

/**
 * The SQL the app's data source logs while `work` runs, TypeORM's queries and the plain reads
 * alike (PlainReads logs through the same logger), appended to `queries`. What the app's
 * background work runs meanwhile is in it too: the caller leaves out what is not the request's.
 */
export async function queriesDuring(
  dataSource: DataSource,
  work: () => Promise<unknown>,
  queries: string[] = [],
): Promise<string[]> {
  const original = dataSource.logger;
  const counting: TypeOrmLogger = {
    logQuery: (query) => void queries.push(query),
    logQueryError: () => undefined,
    logQuerySlow: () => undefined,
    logSchemaBuild: () => undefined,
    logMigration: () => undefined,
    log: () => undefined,
  };
  Object.assign(dataSource, { logger: counting });
  try {
    await work();
  } finally {
    Object.assign(dataSource, { logger: original });
  }
  return queries;
}
