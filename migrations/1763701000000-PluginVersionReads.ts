import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { foreignKeyToUser, id, timestamp } from './columns';

/**
 * `plugin_version_reads`: which admin fetched which version's source or diff (issue 30). A
 * body-less approve acts only on a version whose bytes (its sha256) the approving admin read,
 * checked under the plugin's row lock in the approval's own transaction; kept in the database
 * so any replica knows. One row per admin, plugin and digest; a rejection drops the rows of
 * the version it decides, so a read from before it approves nothing.
 */
export class PluginVersionReads1763701000000 implements MigrationInterface {
  name = 'PluginVersionReads1763701000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'plugin_version_reads',
        columns: [
          id(),
          { name: 'user_id', type: 'integer' },
          { name: 'plugin_id', type: 'integer' },
          { name: 'version', type: 'varchar', length: '32' },
          { name: 'sha256', type: 'varchar', length: '64' },
          timestamp('read_at'),
        ],
        foreignKeys: [
          foreignKeyToUser('user_id'),
          {
            columnNames: ['plugin_id'],
            referencedTableName: 'user_plugins',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
        indices: [
          {
            name: 'uq_plugin_version_reads',
            columnNames: ['plugin_id', 'sha256', 'user_id'],
            isUnique: true,
          },
        ],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('plugin_version_reads', true);
  }
}
