import { MigrationInterface, QueryRunner, Table, TableColumnOptions } from 'typeorm';
import { foreignKeyToUser, id, timestamp } from './columns';

/**
 * Names that must compare exactly (session names, configuration keys) get a binary
 * collation on MySQL, whose default collation would fold case and accents; SQLite compares
 * text exactly already and does not know MySQL's collation names.
 */
function exactText(queryRunner: QueryRunner, name: string, length: number): TableColumnOptions {
  const mysql = queryRunner.connection.driver.options.type === 'mysql';
  return {
    name,
    type: 'varchar',
    length: String(length),
    ...(mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {}),
  };
}

export class CreateConfigurationSessionsTargets1763683300000 implements MigrationInterface {
  name = 'CreateConfigurationSessionsTargets1763683300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'configuration',
        columns: [
          id(),
          { ...exactText(queryRunner, 'key', 100), isUnique: true },
          { name: 'value', type: 'varchar', length: '1024', default: "''" },
          { name: 'section', type: 'varchar', length: '64' },
          { name: 'descrip', type: 'varchar', length: '512', default: "''" },
          { name: 'dirty', type: 'boolean', default: false },
        ],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'sessions',
        columns: [
          id(),
          { name: 'user_id', type: 'integer' },
          exactText(queryRunner, 'name', 50),
          { name: 'active', type: 'boolean', default: false },
          timestamp('created_at'),
        ],
        foreignKeys: [foreignKeyToUser('user_id')],
        // Also the index behind "the sessions of a user".
        indices: [{ name: 'uq_sessions_user_id_name', columnNames: ['user_id', 'name'], isUnique: true }],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'targets',
        columns: [
          id(),
          { name: 'user_id', type: 'integer' },
          { name: 'target_url', type: 'varchar', length: '2048' },
          // A URL of up to 2048 characters is too long for a MySQL index key; its SHA-256 is not.
          { name: 'target_url_hash', type: 'varchar', length: '64' },
          { name: 'url_scheme', type: 'varchar', length: '8' },
          { name: 'host_name', type: 'varchar', length: '255' },
          { name: 'port_number', type: 'integer' },
          { name: 'host_path', type: 'varchar', length: '2048' },
          { name: 'scope', type: 'boolean', default: true },
          timestamp('created_at'),
        ],
        foreignKeys: [foreignKeyToUser('user_id')],
        indices: [
          {
            name: 'uq_targets_user_id_url_hash',
            columnNames: ['user_id', 'target_url_hash'],
            isUnique: true,
          },
          { name: 'idx_targets_user_id_host_name', columnNames: ['user_id', 'host_name'] },
        ],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'session_targets',
        columns: [
          { name: 'session_id', type: 'integer', isPrimary: true },
          { name: 'target_id', type: 'integer', isPrimary: true },
        ],
        // Deleting a session or a target removes its links, so a target leaves every session.
        foreignKeys: [
          {
            columnNames: ['session_id'],
            referencedTableName: 'sessions',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
          {
            columnNames: ['target_id'],
            referencedTableName: 'targets',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
        indices: [{ name: 'idx_session_targets_target_id', columnNames: ['target_id'] }],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('session_targets');
    await queryRunner.dropTable('targets');
    await queryRunner.dropTable('sessions');
    await queryRunner.dropTable('configuration');
  }
}
