import { MigrationInterface, QueryRunner, Table } from 'typeorm';

const toPlugin = {
  columnNames: ['plugin_id'],
  referencedTableName: 'user_plugins',
  referencedColumnNames: ['id'],
  onDelete: 'CASCADE',
};

/**
 * Issue 22: `q=` and `tag=` through indexes of their own (src/community-plugins/plugin-search-index.ts),
 * and an index that covers the catalogue's count and page. The existing plugins are indexed by
 * 1763699400000-CatalogueSearchRuns, which replaced this table of trigrams (`plugin_grams`,
 * still made here for replicas on the code before it) with the runs the index now reads.
 *
 * On MySQL the index columns compare bytewise (`_bin`): the text is lower-cased by the app and
 * the grams are hex, so no collation may fold accents, case or trailing spaces behind its back.
 * Idempotent: each table and index is made only when absent.
 */
export class CatalogueSearchIndex1763694000000 implements MigrationInterface {
  name = 'CatalogueSearchIndex1763694000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.options.type === 'mysql';
    const binary = mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {};
    const ascii = mysql ? { charset: 'ascii', collation: 'ascii_bin' } : {};
    await queryRunner.createTable(
      new Table({
        name: 'plugin_search',
        columns: [
          { name: 'plugin_id', type: 'integer', isPrimary: true },
          { name: 'name', type: 'text', ...binary },
          { name: 'description', type: 'text', ...binary },
          { name: 'author', type: 'text', ...binary },
        ],
        foreignKeys: [toPlugin],
      }),
      true,
    );
    if (mysql) {
      await queryRunner.createTable(
        new Table({
          name: 'plugin_grams',
          columns: [
            // Up to three characters of four UTF-8 bytes each, in hex.
            { name: 'gram', type: 'varchar', length: '24', isPrimary: true, ...ascii },
            { name: 'plugin_id', type: 'integer', isPrimary: true },
          ],
          foreignKeys: [toPlugin],
          indices: [{ name: 'idx_plugin_grams_plugin_id', columnNames: ['plugin_id'] }],
        }),
        true,
      );
      await queryRunner.createTable(
        new Table({
          name: 'plugin_tags',
          columns: [
            { name: 'plugin_id', type: 'integer', isPrimary: true },
            { name: 'tag', type: 'varchar', length: '32', isPrimary: true, ...ascii },
          ],
          foreignKeys: [toPlugin],
          indices: [{ name: 'idx_plugin_tags_tag', columnNames: ['tag', 'plugin_id'] }],
        }),
        true,
      );
    } else {
      // WITHOUT ROWID: the primary key is the table, one b-tree instead of a table and an index
      // (InnoDB tables are clustered on their primary key anyway).
      await queryRunner.query(
        'CREATE TABLE IF NOT EXISTS `plugin_grams` (`gram` varchar(24) NOT NULL, ' +
          '`plugin_id` integer NOT NULL REFERENCES `user_plugins` (`id`) ON DELETE CASCADE, ' +
          'PRIMARY KEY (`gram`, `plugin_id`)) WITHOUT ROWID',
      );
      await queryRunner.query(
        'CREATE INDEX IF NOT EXISTS `idx_plugin_grams_plugin_id` ON `plugin_grams` (`plugin_id`)',
      );
      await queryRunner.query(
        'CREATE TABLE IF NOT EXISTS `plugin_tags` (`plugin_id` integer NOT NULL ' +
          'REFERENCES `user_plugins` (`id`) ON DELETE CASCADE, `tag` varchar(32) NOT NULL, ' +
          'PRIMARY KEY (`plugin_id`, `tag`)) WITHOUT ROWID',
      );
      await queryRunner.query(
        'CREATE INDEX IF NOT EXISTS `idx_plugin_tags_tag` ON `plugin_tags` (`tag`, `plugin_id`)',
      );
    }

    const plugins = await queryRunner.getTable('user_plugins');
    if (!plugins) return;
    const has = (columns: string[]) => columns.every((column) => plugins.findColumnByName(column));
    if (
      has(['status', 'file_altered_at', 'created_at']) &&
      !plugins.indices.some((index) => index.name === 'idx_user_plugins_catalogue')
    ) {
      // The catalogue's count and its page of ids, newest first, read from the index alone.
      await queryRunner.query(
        'CREATE INDEX `idx_user_plugins_catalogue` ON `user_plugins` (`status`, `file_altered_at`, `created_at`, `id`)',
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.options.type === 'mysql';
    await queryRunner.query(
      mysql
        ? 'DROP INDEX `idx_user_plugins_catalogue` ON `user_plugins`'
        : 'DROP INDEX IF EXISTS `idx_user_plugins_catalogue`',
    );
    for (const table of ['plugin_tags', 'plugin_grams', 'plugin_search'])
      await queryRunner.dropTable(table, true);
  }
}
