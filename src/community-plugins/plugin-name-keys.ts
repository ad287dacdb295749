import { Logger } from '@nestjs/common';
import type { QueryRunner } from 'typeorm';
import { identityKey, MAX_IDENTITY_KEY_LENGTH } from '../users/identity-key';

const NAME_KEY_INDEX = 'uq_user_plugins_name_key';

/**
 * Gives each plugin without one its name key (identityKey(name), as user names compare) and
 * makes sure the key's unique index exists: at every start that migrates, after the migration
 * that adds the key and the schema upgrade (which may have added it to an older table). A plugin
 * whose key an older plugin already has keeps its name without a key (no new plugin can take
 * either spelling) and is reported in the log; the start goes on.
 */
export async function completePluginNameKeys(queryRunner: QueryRunner): Promise<void> {
  const table = await queryRunner.getTable('user_plugins');
  if (!table?.findColumnByName('name_key')) return;
  const logger = new Logger('PluginNames');
  const keyless = (await queryRunner.query(
    'SELECT id, name FROM user_plugins WHERE name_key IS NULL ORDER BY id',
  )) as Array<{ id: number; name: string }>;
  for (const row of keyless) {
    const key = identityKey(row.name);
    // Characters, as the varchar(255) column counts them.
    if ([...key].length > MAX_IDENTITY_KEY_LENGTH) {
      logger.warn(`Plugin ${row.id}: its name is too long once normalised; it keeps its name without a key`);
      continue;
    }
    const [owner] = (await queryRunner.query('SELECT id FROM user_plugins WHERE name_key = ?', [
      key,
    ])) as Array<{
      id: number;
    }>;
    if (owner) {
      logger.warn(
        `Plugin ${row.id} has the same name as plugin ${owner.id} once case and Unicode forms are ignored; ` +
          'both keep their names, and no new plugin can take either',
      );
      continue;
    }
    await queryRunner.query('UPDATE user_plugins SET name_key = ? WHERE id = ?', [key, row.id]);
  }
  if (!table.indices.some((index) => index.name === NAME_KEY_INDEX)) {
    await queryRunner.query(`CREATE UNIQUE INDEX ${NAME_KEY_INDEX} ON user_plugins (name_key)`);
  }
}
