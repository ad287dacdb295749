import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { foreignKeyToUser, id, timestamp } from './columns';

/**
 * Issue 31: the reviewers' test-runs of a plugin version in the jail. One row per run (the
 * newest is the one shown); `sha256` names the bytes run. The report is JSON of bounded size
 * (events, stdout and stderr are bounded by the runner): MEDIUMTEXT on MySQL, where TEXT
 * holds 64 KB.
 */
export class CreatePluginTestRuns1763703000000 implements MigrationInterface {
  name = 'CreatePluginTestRuns1763703000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    await queryRunner.createTable(
      new Table({
        name: 'plugin_test_runs',
        columns: [
          id(),
          { name: 'plugin_id', type: 'integer' },
          { name: 'version', type: 'varchar', length: '32' },
          { name: 'sha256', type: 'varchar', length: '64' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'requested_by_user_id', type: 'integer' },
          { name: 'report', type: mysql ? 'mediumtext' : 'text', isNullable: true },
          timestamp('created_at'),
          timestamp('finished_at', true),
        ],
        indices: [{ name: 'idx_plugin_test_runs_version', columnNames: ['plugin_id', 'version', 'id'] }],
        foreignKeys: [
          {
            columnNames: ['plugin_id'],
            referencedTableName: 'user_plugins',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
          foreignKeyToUser('requested_by_user_id'),
        ],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('plugin_test_runs', true);
  }
}
