import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { foreignKeyToUser, id, timestamp } from './columns';

export class CreateUserPlugins1763683400000 implements MigrationInterface {
  name = 'CreateUserPlugins1763683400000';

  /**
   * `ifNotExist`: an install whose plugin table predates this migration keeps its table and
   * rows; the start-up schema upgrade then adds the columns it lacks.
   */
  async up(queryRunner: QueryRunner): Promise<void> {
    // MySQL's default collation already compares names without case; SQLite needs telling,
    // so the unique index means the same thing on both.
    const caseInsensitive =
      queryRunner.connection.options.type === 'better-sqlite3' ? { collation: 'NOCASE' } : {};
    await queryRunner.createTable(
      new Table({
        name: 'user_plugins',
        columns: [
          id(),
          { name: 'name', type: 'varchar', length: '128', ...caseInsensitive },
          { name: 'description', type: 'text' },
          { name: 'group', type: 'varchar', length: '16' },
          { name: 'type', type: 'varchar', length: '16' },
          { name: 'author', type: 'varchar', length: '128' },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'rejection_reason', type: 'text', isNullable: true },
          { name: 'user_id', type: 'integer' },
          { name: 'reviewed_by_user_id', type: 'integer', isNullable: true },
          timestamp('reviewed_at', true),
          { name: 'execution_timeout', type: 'integer', default: 300 },
          { name: 'sha256', type: 'varchar', length: '64', isNullable: true },
          { name: 'file_path', type: 'varchar', length: '255' },
          timestamp('created_at'),
          timestamp('updated_at', true),
        ],
        foreignKeys: [
          foreignKeyToUser('user_id'),
          {
            columnNames: ['reviewed_by_user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'SET NULL',
          },
        ],
        indices: [
          { name: 'uq_user_plugins_name', columnNames: ['name'], isUnique: true },
          { name: 'idx_user_plugins_status_created_at', columnNames: ['status', 'created_at'] },
          { name: 'idx_user_plugins_user_id', columnNames: ['user_id'] },
          { name: 'idx_user_plugins_reviewed_by_user_id', columnNames: ['reviewed_by_user_id'] },
        ],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('user_plugins');
  }
}
