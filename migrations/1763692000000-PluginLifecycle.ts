import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { foreignKeyToUser, id, timestamp } from './columns';

const toPlugin = (column: string) => ({
  columnNames: [column],
  referencedTableName: 'user_plugins',
  referencedColumnNames: ['id'],
  onDelete: 'CASCADE',
});

/**
 * The plugin lifecycle (issue 20): versions, the approvals of a version, ratings, and the
 * append-only audit log with its one-row chain head. Every existing plugin becomes its own
 * first version; a digest missing here is computed from the file at start-up
 * (PluginVersionsUpgrade), since only the app knows the plugin directory.
 */
export class PluginLifecycle1763692000000 implements MigrationInterface {
  name = 'PluginLifecycle1763692000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const escape = (name: string) => queryRunner.connection.driver.escape(name);
    const plugins = await queryRunner.getTable('user_plugins');
    if (plugins) {
      // Plain ADD COLUMN on both databases: TypeORM's addColumn rebuilds a SQLite table and loses NOCASE.
      const added: Array<[string, string]> = [
        ['pending_version', 'varchar(32) NULL'],
        ['rating_total', 'integer NOT NULL DEFAULT 0'],
        ['ratings_count', 'integer NOT NULL DEFAULT 0'],
        [
          'file_altered_at',
          queryRunner.connection.options.type === 'mysql' ? 'datetime(3) NULL' : 'datetime NULL',
        ],
      ];
      for (const [name, definition] of added) {
        if (!plugins.findColumnByName(name)) {
          await queryRunner.query(
            `ALTER TABLE ${escape('user_plugins')} ADD COLUMN ${escape(name)} ${definition}`,
          );
        }
      }
    }

    await queryRunner.createTable(
      new Table({
        name: 'plugin_versions',
        columns: [
          id(),
          { name: 'plugin_id', type: 'integer' },
          { name: 'version', type: 'varchar', length: '32' },
          { name: 'sha256', type: 'varchar', length: '64', isNullable: true },
          { name: 'file_path', type: 'varchar', length: '255' },
          { name: 'changelog', type: 'text', isNullable: true },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'user_id', type: 'integer' },
          { name: 'reviewed_by_user_id', type: 'integer', isNullable: true },
          timestamp('reviewed_at', true),
          { name: 'rejection_reason', type: 'text', isNullable: true },
          timestamp('created_at'),
        ],
        foreignKeys: [toPlugin('plugin_id')],
        indices: [
          {
            name: 'uq_plugin_versions_plugin_version',
            columnNames: ['plugin_id', 'version'],
            isUnique: true,
          },
          { name: 'idx_plugin_versions_file_path', columnNames: ['file_path'] },
        ],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'plugin_version_approvals',
        columns: [
          id(),
          { name: 'version_id', type: 'integer' },
          { name: 'user_id', type: 'integer' },
          timestamp('created_at'),
        ],
        foreignKeys: [
          {
            columnNames: ['version_id'],
            referencedTableName: 'plugin_versions',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
        indices: [
          { name: 'uq_plugin_version_approvals', columnNames: ['version_id', 'user_id'], isUnique: true },
        ],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'plugin_ratings',
        columns: [
          id(),
          { name: 'plugin_id', type: 'integer' },
          { name: 'user_id', type: 'integer' },
          { name: 'stars', type: 'integer' },
          timestamp('created_at'),
          timestamp('updated_at'),
        ],
        foreignKeys: [toPlugin('plugin_id'), foreignKeyToUser('user_id')],
        indices: [
          { name: 'uq_plugin_ratings_plugin_user', columnNames: ['plugin_id', 'user_id'], isUnique: true },
        ],
      }),
      true,
    );
    // No foreign keys: a row outlives the plugin or user it names.
    await queryRunner.createTable(
      new Table({
        name: 'audit_log',
        columns: [
          id(),
          { name: 'seq', type: 'integer' },
          { name: 'at', type: 'varchar', length: '32' },
          { name: 'actor', type: 'varchar', length: '16' },
          { name: 'actor_user_id', type: 'integer', isNullable: true },
          { name: 'action', type: 'varchar', length: '32' },
          { name: 'subject', type: 'varchar', length: '128' },
          { name: 'details', type: 'text' },
          { name: 'prev_hash', type: 'varchar', length: '64' },
          { name: 'hash', type: 'varchar', length: '64' },
        ],
        indices: [
          // One row per position: two appends that read the same head cannot both commit.
          { name: 'uq_audit_log_seq', columnNames: ['seq'], isUnique: true },
          { name: 'uq_audit_log_prev_hash', columnNames: ['prev_hash'], isUnique: true },
          { name: 'idx_audit_log_action', columnNames: ['action'] },
          { name: 'idx_audit_log_subject', columnNames: ['subject'] },
        ],
      }),
      true,
    );
    // The head every append locks first, so appends are serialised on every database.
    await queryRunner.createTable(
      new Table({
        name: 'audit_chain',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true },
          { name: 'entries', type: 'integer' },
          { name: 'last_hash', type: 'varchar', length: '64' },
        ],
      }),
      true,
    );
    const [head] = (await queryRunner.query(`SELECT COUNT(*) AS n FROM ${escape('audit_chain')}`)) as Array<{
      n: number | string;
    }>;
    if (Number(head?.n ?? 0) === 0) {
      await queryRunner.query(
        `INSERT INTO ${escape('audit_chain')} (${escape('id')}, ${escape('entries')}, ${escape('last_hash')}) VALUES (1, 0, '')`,
      );
    }

    if (plugins) await firstVersions(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('audit_chain', true);
    await queryRunner.dropTable('audit_log', true);
    await queryRunner.dropTable('plugin_ratings', true);
    await queryRunner.dropTable('plugin_version_approvals', true);
    await queryRunner.dropTable('plugin_versions', true);
    for (const column of ['file_altered_at', 'ratings_count', 'rating_total', 'pending_version']) {
      await queryRunner.dropColumn('user_plugins', column);
    }
  }
}

/**
 * Every plugin without a version becomes its first version, with the row's own version,
 * digest, file and review. A plugin table older than the migrations may lack some columns
 * (the start-up upgrade adds them later): their defaults stand in. Also run at start-up.
 */
export async function firstVersions(queryRunner: QueryRunner): Promise<void> {
  const escape = (name: string) => queryRunner.connection.driver.escape(name);
  const table = await queryRunner.getTable('user_plugins');
  if (!table) return;
  const has = (name: string) => Boolean(table.findColumnByName(name));
  const column = (name: string, fallback: string) => (has(name) ? `p.${escape(name)}` : fallback);
  await queryRunner.query(
    `INSERT INTO ${escape('plugin_versions')} (${[
      'plugin_id',
      'version',
      'sha256',
      'file_path',
      'changelog',
      'status',
      'user_id',
      'reviewed_by_user_id',
      'reviewed_at',
      'rejection_reason',
      'created_at',
    ]
      .map(escape)
      .join(
        ', ',
      )}) SELECT p.${escape('id')}, ${column('version', "'1.0.0'")}, ${column('sha256', 'NULL')}, ` +
      `p.${escape('file_path')}, NULL, p.${escape('status')}, p.${escape('user_id')}, ` +
      `${column('reviewed_by_user_id', 'NULL')}, ${column('reviewed_at', 'NULL')}, ${column('rejection_reason', 'NULL')}, ` +
      `p.${escape('created_at')} FROM ${escape('user_plugins')} p WHERE NOT EXISTS ` +
      `(SELECT 1 FROM ${escape('plugin_versions')} v WHERE v.${escape('plugin_id')} = p.${escape('id')})`,
  );
  if (has('pending_version')) {
    await queryRunner.query(
      `UPDATE ${escape('user_plugins')} SET ${escape('pending_version')} = ${has('version') ? escape('version') : "'1.0.0'"} ` +
        `WHERE ${escape('status')} = 'pending' AND ${escape('pending_version')} IS NULL`,
    );
  }
}
