import { Logger } from '@nestjs/common';
import { DataSource, EntityMetadata, EntityTarget, ObjectLiteral, QueryRunner, TableColumn } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { ConnectionMetadataBuilder } from 'typeorm/connection/ConnectionMetadataBuilder';
import { TableUtils } from 'typeorm/schema-builder/util/TableUtils';
import { NamedLock, withNamedLock } from './named-lock';

const UPGRADE_LOCK: NamedLock = { name: 'svc_api_schema_upgrade', guards: 'schema upgrade' };

/** An entity class, as the metadata builder takes it. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type UpgradedEntity = EntityTarget<ObjectLiteral> & Function;

/** What a column added here cannot say by its default alone (values computed from other columns, an index). */
export type SchemaUpgradeStep = (queryRunner: QueryRunner) => Promise<void>;

/** The entities whose older tables are brought up to date, and the steps that complete them after. */
export interface SchemaUpgrade {
  entities: readonly UpgradedEntity[];
  steps: readonly SchemaUpgradeStep[];
}

/**
 * Runs at every start, after the migrations: each column that an upgraded entity expects and
 * its table lacks is added with the entity's default, so an install whose tables are older
 * than the code catches up without touching its rows. Nothing else is changed (types,
 * indexes and extra columns stay as they are), which makes a second run a no-op. Which
 * entities are upgraded is the composition root's choice (src/schema-upgraded-entities.ts):
 * this folder knows no feature.
 */
export async function upgradeSchema(
  dataSource: DataSource,
  { entities, steps }: SchemaUpgrade,
): Promise<void> {
  const logger = new Logger('SchemaUpgrade');
  // Replicas that start together take turns, so no column is added twice.
  await withNamedLock(dataSource, UPGRADE_LOCK, async (queryRunner) => {
    for (const entity of entities) {
      await addMissingColumns(queryRunner, await metadataOf(dataSource, entity), logger);
    }
    for (const step of steps) await step(queryRunner);
  });
}

async function addMissingColumns(
  queryRunner: QueryRunner,
  metadata: EntityMetadata,
  logger: Logger,
): Promise<void> {
  const table = await queryRunner.getTable(metadata.tablePath);
  if (!table) {
    logger.warn(`Table ${metadata.tableName} does not exist; nothing to upgrade`);
    return;
  }
  const missing = metadata.columns.filter((column) => !table.findColumnByName(column.databaseName));
  if (missing.length === 0) return;

  const columns: TableColumn[] = [];
  for (const column of missing) {
    const added = tableColumnFor(column, queryRunner, logger, metadata.tableName);
    if (added) columns.push(added);
  }
  if (columns.length === 0) return;

  if (isSqlite(queryRunner)) {
    for (const column of columns)
      await queryRunner.query(sqliteAddColumn(queryRunner, metadata.tableName, column));
  } else {
    await queryRunner.addColumns(table, columns);
  }
  for (const column of columns) {
    // The default as SQL text, which quotes numbers on MySQL; the log shows the value.
    const value = column.default === undefined ? 'NULL' : String(column.default).replace(/^'(.*)'$/, '$1');
    logger.log(`Added column ${metadata.tableName}.${column.name} (default ${value})`);
  }
}

/**
 * The column as the entity declares it, minus what cannot be added to a table with rows:
 * keys and uniqueness are left to the migrations, and a NOT NULL column without a default
 * is added as nullable, because its existing rows have no value to give it.
 */
function tableColumnFor(
  column: ColumnMetadata,
  queryRunner: QueryRunner,
  logger: Logger,
  tableName: string,
): TableColumn | null {
  if (column.isPrimary || column.isGenerated) {
    logger.error(
      `Table ${tableName} lacks its key column ${column.databaseName}; it cannot be added in place`,
    );
    return null;
  }
  const options = TableUtils.createTableColumnOptions(column, queryRunner.connection.driver);
  options.isUnique = false;
  if (!options.isNullable && options.default === undefined) {
    logger.warn(`Column ${tableName}.${column.databaseName} has no default; adding it as nullable`);
    options.isNullable = true;
  }
  return new TableColumn(options);
}

const isSqlite = (queryRunner: QueryRunner): boolean =>
  ['better-sqlite3', 'sqlite'].includes(queryRunner.connection.options.type);

/**
 * SQLite's own ADD COLUMN, not TypeORM's addColumn: that one rebuilds the table, which drops
 * what it does not model (the NOCASE collation of a name) and, with foreign keys on, would
 * cascade the drop of the old `users` into every table that references it. The columns
 * added here are nullable or have a constant default, which is all ADD COLUMN asks.
 */
function sqliteAddColumn(queryRunner: QueryRunner, tableName: string, column: TableColumn): string {
  const driver = queryRunner.connection.driver;
  const escape = (name: string) => driver.escape(name);
  let definition = `${escape(column.name)} ${driver.createFullType(column)}`;
  if (column.collation) definition += ` COLLATE ${column.collation}`;
  if (!column.isNullable) definition += ' NOT NULL';
  if (column.default !== undefined && column.default !== null)
    definition += ` DEFAULT (${String(column.default)})`;
  return `ALTER TABLE ${escape(tableName)} ADD COLUMN ${definition}`;
}

/** Entities not registered with this data source (a CLI that loads fewer modules) are built for it. */
async function metadataOf(dataSource: DataSource, entity: UpgradedEntity): Promise<EntityMetadata> {
  if (dataSource.hasMetadata(entity)) return dataSource.getMetadata(entity);
  const [metadata] = await new ConnectionMetadataBuilder(dataSource).buildEntityMetadatas([entity]);
  return metadata;
}
