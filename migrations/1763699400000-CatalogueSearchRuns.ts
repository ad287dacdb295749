import { MigrationInterface, QueryRunner } from 'typeorm';
import { repairIndex } from '../src/community-plugins/catalogue/index/plugin-search-index';

/**
 * Issue 22: `q=` reads `plugin_runs` (src/community-plugins/plugin-search-index.ts): the run of
 * up to eight characters at every position of a plugin's text, with the lists the plugin is in
 * and its `created_at`, so a search of the catalogue is counted and paged from the runs alone.
 * `plugin_search` gains `list`, the lists its runs carry (null on rows older code writes).
 * Every plugin is indexed here: those without index rows, and those with the rows of
 * 1763694000000, whose trigram table `plugin_grams` this code no longer reads or writes. That
 * table stays for replicas still on the code before, which write and read it during a rolling
 * upgrade; a later migration drops it. A plugin table too old to have the indexed columns yet is
 * indexed at start-up instead (after the schema upgrade adds them). Idempotent.
 */
export class CatalogueSearchRuns1763699400000 implements MigrationInterface {
  name = 'CatalogueSearchRuns1763699400000';
  /**
   * About 100 runs per plugin: the fill commits 2,000 plugins at a time rather than millions of
   * rows in one transaction (one Galera write set). A fill cut short is resumed by the next run
   * (every step is idempotent, and plugins already indexed are skipped).
   */
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.options.type === 'mysql';
    if (mysql) {
      await queryRunner.query(
        'CREATE TABLE IF NOT EXISTS `plugin_runs` (' +
          // Up to eight characters of four UTF-8 bytes each, in hex.
          '`run` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, `plugin_id` int NOT NULL, ' +
          '`shared` smallint NOT NULL, `list` smallint NOT NULL, `created_ms` bigint NOT NULL, ' +
          'PRIMARY KEY (`run`, `plugin_id`), KEY `idx_plugin_runs_plugin_id` (`plugin_id`), ' +
          'CONSTRAINT `fk_plugin_runs_plugin` FOREIGN KEY (`plugin_id`) REFERENCES `user_plugins` (`id`) ' +
          'ON DELETE CASCADE) ENGINE=InnoDB',
      );
    } else {
      // WITHOUT ROWID: the primary key is the table, one b-tree instead of a table and an index.
      await queryRunner.query(
        'CREATE TABLE IF NOT EXISTS `plugin_runs` (`run` varchar(64) NOT NULL, ' +
          '`plugin_id` integer NOT NULL REFERENCES `user_plugins` (`id`) ON DELETE CASCADE, ' +
          '`shared` integer NOT NULL, `list` integer NOT NULL, `created_ms` integer NOT NULL, ' +
          'PRIMARY KEY (`run`, `plugin_id`)) WITHOUT ROWID',
      );
      await queryRunner.query(
        'CREATE INDEX IF NOT EXISTS `idx_plugin_runs_plugin_id` ON `plugin_runs` (`plugin_id`)',
      );
    }
    const search = await queryRunner.getTable('plugin_search');
    if (search && !search.findColumnByName('list')) {
      // A plain ALTER on both databases (TypeORM would copy the table on SQLite).
      await queryRunner.query('ALTER TABLE `plugin_search` ADD COLUMN `list` integer NULL');
    }

    const plugins = await queryRunner.getTable('user_plugins');
    const indexed = ['name', 'description', 'author', 'tags', 'status', 'file_altered_at', 'created_at'];
    if (plugins && indexed.every((column) => plugins.findColumnByName(column))) {
      const run = (sql: string, params?: unknown[]) => queryRunner.query(sql, params) as Promise<unknown>;
      await repairIndex(run, async (work) => {
        await queryRunner.startTransaction();
        try {
          const done = await work(run);
          await queryRunner.commitTransaction();
          return done;
        } catch (error) {
          await queryRunner.rollbackTransaction();
          throw error;
        }
      });
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('plugin_runs', true);
    const search = await queryRunner.getTable('plugin_search');
    if (search?.findColumnByName('list')) await queryRunner.dropColumn('plugin_search', 'list');
  }
}
