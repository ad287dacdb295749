import { Logger } from '@nestjs/common';
import { DataSource, EntityMetadata, QueryRunner, TableColumn } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { ConnectionMetadataBuilder } from 'typeorm/connection/ConnectionMetadataBuilder';
import { TableUtils } from 'typeorm/schema-builder/util/TableUtils';
import { User } from '../account/user.entity';
import { UserPlugin } from '../community-plugins/user-plugin.entity';

/** The tables whose older shapes exist in the field and are brought up to date at every start. */
const UPGRADED_ENTITIES = [User, UserPlugin];

const UPGRADE_LOCK = 'svc_api_schema_upgrade';
const LOCK_WAIT_SECONDS = 120;

/**
 * Runs at every start, after the migrations: each column that an upgraded entity expects and
 * its table lacks is added with the entity's default, so an install whose tables are older
 * than the code catches up without touching its rows. Nothing else is changed (types,
 * indexes and extra columns stay as they are), which makes a second run a no-op.
 */
export async function upgradeSchema(dataSource: DataSource): Promise<void> {
  const logger = new Logger('SchemaUpgrade');
  const queryRunner = dataSource.createQueryRunner();
  try {
    // Replicas that start together take turns, so no column is added twice.
    if (dataSource.options.type === 'mysql') await acquireLock(queryRunner);
    try {
      for (const entity of UPGRADED_ENTITIES) {
        await addMissingColumns(queryRunner, await metadataOf(dataSource, entity), logger);
      }
    } finally {
      if (dataSource.options.type === 'mysql') {
        await queryRunner.query('SELECT RELEASE_LOCK(?)', [UPGRADE_LOCK]).catch(() => undefined);
      }
    }
  } finally {
    await queryRunner.release();
  }
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
async function metadataOf(
  dataSource: DataSource,
  entity: (typeof UPGRADED_ENTITIES)[number],
): Promise<EntityMetadata> {
  if (dataSource.hasMetadata(entity)) return dataSource.getMetadata(entity);
  const [metadata] = await new ConnectionMetadataBuilder(dataSource).buildEntityMetadatas([entity]);
  return metadata;
}

async function acquireLock(queryRunner: QueryRunner): Promise<void> {
  const [row] = (await queryRunner.query('SELECT GET_LOCK(?, ?) AS acquired', [
    UPGRADE_LOCK,
    LOCK_WAIT_SECONDS,
  ])) as {
    acquired: number | string | null;
  }[];
  if (Number(row?.acquired) !== 1) throw new Error('Timed out waiting for the schema upgrade lock');
}
