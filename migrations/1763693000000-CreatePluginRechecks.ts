import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { timestamp } from './columns';

/**
 * Issue 18: the verdict of the current validator rules on each approved plugin's served file.
 * One row per plugin (unique plugin_id), replaced when the rules version or the served digest
 * changes: only the current verdict matters to admins, and the unique key makes a plugin
 * checked by two replicas at once one row, not two. `sha256` names the bytes judged, so a
 * newer approved version is never shown the findings of the file it replaced.
 */
export class CreatePluginRechecks1763693000000 implements MigrationInterface {
  name = 'CreatePluginRechecks1763693000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'plugin_rechecks',
        columns: [
          { name: 'plugin_id', type: 'integer', isPrimary: true },
          { name: 'rules_version', type: 'integer' },
          { name: 'sha256', type: 'varchar', length: '64' },
          { name: 'findings', type: 'text' },
          timestamp('checked_at'),
        ],
        foreignKeys: [
          {
            columnNames: ['plugin_id'],
            referencedTableName: 'user_plugins',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('plugin_rechecks', true);
  }
}
