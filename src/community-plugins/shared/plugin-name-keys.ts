import { Logger } from '@nestjs/common';
import type { QueryRunner } from 'typeorm';
import { identityKey, MAX_IDENTITY_KEY_LENGTH } from '../../users/identity-key';

const NAME_KEY_INDEX = 'uq_user_plugins_name_key';

/** Plugins keyed per transaction (and, on MySQL, per UPDATE statement). */
export const NAME_KEY_BATCH = 1000;

/**
 * Gives each plugin without one its name key (identityKey(name), as user names compare) and
 * makes sure the key's unique index exists: at every start that migrates, after the migration
 * that adds the key and the schema upgrade (which may have added it to an older table). A plugin
 * whose key an older plugin already has keeps its name without a key (no new plugin can take
 * either spelling) and is reported in the log; the start goes on.
 *
 * The keys are computed here, in id order, a batch at a time, and each batch is written in one
 * transaction (issue 22: one lookup and one UPDATE per plugin took 12.4 s at 100,000 plugins).
 * Which key is taken is known from the keys given so far and those already stored: all of them
 * at once while there is no unique index (an install being upgraded, where a lookup per batch
 * would read the whole table), else each batch's keys through the index.
 */
export async function completePluginNameKeys(queryRunner: QueryRunner): Promise<void> {
  const table = await queryRunner.getTable('user_plugins');
  if (!table?.findColumnByName('name_key')) return;
  const logger = new Logger('PluginNames');
  const indexed = table.indices.some((index) => index.name === NAME_KEY_INDEX);
  const keyless = (await queryRunner.query(
    'SELECT id, name FROM user_plugins WHERE name_key IS NULL ORDER BY id',
  )) as Array<{ id: number | string; name: string }>;

  if (keyless.length > 0) {
    // Which plugin holds each key: the first in id order that asked for it.
    const holders = new Map<string, number>();
    if (!indexed) {
      const keyed = (await queryRunner.query(
        'SELECT id, name_key FROM user_plugins WHERE name_key IS NOT NULL',
      )) as Array<{ id: number | string; name_key: string }>;
      for (const row of keyed) holders.set(row.name_key, Number(row.id));
    }
    for (let start = 0; start < keyless.length; start += NAME_KEY_BATCH) {
      const batch = keyless.slice(start, start + NAME_KEY_BATCH).map((row) => ({
        id: Number(row.id),
        key: identityKey(row.name),
      }));
      if (indexed) await findHolders(queryRunner, batch, holders);
      const keys: Array<{ id: number; key: string }> = [];
      for (const { id, key } of batch) {
        // Characters, as the varchar(255) column counts them.
        if ([...key].length > MAX_IDENTITY_KEY_LENGTH) {
          logger.warn(`Plugin ${id}: its name is too long once normalised; it keeps its name without a key`);
          continue;
        }
        const holder = holders.get(key);
        if (holder !== undefined) {
          logger.warn(
            `Plugin ${id} has the same name as plugin ${holder} once case and Unicode forms are ignored; ` +
              'both keep their names, and no new plugin can take either',
          );
          continue;
        }
        holders.set(key, id);
        keys.push({ id, key });
      }
      await writeKeys(queryRunner, keys);
    }
  }
  if (!indexed) {
    await queryRunner.query(`CREATE UNIQUE INDEX ${NAME_KEY_INDEX} ON user_plugins (name_key)`);
  }
}

/** The stored holders of a batch's keys, looked up through the unique index. */
async function findHolders(
  queryRunner: QueryRunner,
  batch: ReadonlyArray<{ key: string }>,
  holders: Map<string, number>,
): Promise<void> {
  const keys = [...new Set(batch.map((row) => row.key))].filter((key) => !holders.has(key));
  if (keys.length === 0) return;
  const rows = (await queryRunner.query(
    `SELECT id, name_key FROM user_plugins WHERE name_key IN (${keys.map(() => '?').join(', ')})`,
    keys,
  )) as Array<{ id: number | string; name_key: string }>;
  for (const row of rows) holders.set(row.name_key, Number(row.id));
}

/**
 * One batch in one transaction. MySQL: one UPDATE with a CASE over the ids, one round trip.
 * SQLite runs in this process, where a statement per plugin costs microseconds, while a CASE of
 * a thousand branches is evaluated branch by branch for each row (five times slower at 100,000).
 */
async function writeKeys(queryRunner: QueryRunner, keys: ReadonlyArray<{ id: number; key: string }>) {
  if (keys.length === 0) return;
  const mysql = queryRunner.connection.options.type === 'mysql';
  await queryRunner.startTransaction();
  try {
    if (mysql) {
      await queryRunner.query(
        `UPDATE user_plugins SET name_key = CASE id ${keys.map(() => 'WHEN ? THEN ?').join(' ')} END ` +
          `WHERE id IN (${keys.map(() => '?').join(', ')})`,
        [...keys.flatMap(({ id, key }) => [id, key]), ...keys.map(({ id }) => id)],
      );
    } else {
      for (const { id, key } of keys) {
        await queryRunner.query('UPDATE user_plugins SET name_key = ? WHERE id = ?', [key, id]);
      }
    }
    await queryRunner.commitTransaction();
  } catch (error) {
    await queryRunner.rollbackTransaction();
    throw error;
  }
}
