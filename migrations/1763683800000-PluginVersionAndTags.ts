import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plugins carry a version (default `1.0.0`) and up to 10 tags, which the marketplace cards
 * show and the catalogue filters on. Tags are one column in the form `,tag1,tag2,` (empty
 * for none), so `tag=` is one `LIKE '%,tag,%'` on both databases.
 *
 * Plain `ALTER TABLE ... ADD COLUMN` on both databases: TypeORM's addColumn rebuilds a SQLite
 * table, and that rebuild would not keep the NOCASE collation of the name index. A plugin
 * table without the columns may also meet the start-up upgrade first on an install whose
 * table predates the migrations, hence the checks.
 */
export class PluginVersionAndTags1763683800000 implements MigrationInterface {
  name = 'PluginVersionAndTags1763683800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('user_plugins');
    if (!table) return;
    const escape = (name: string) => queryRunner.connection.driver.escape(name);
    if (!table.findColumnByName('version')) {
      await queryRunner.query(
        `ALTER TABLE ${escape('user_plugins')} ADD COLUMN ${escape('version')} varchar(32) NOT NULL DEFAULT '1.0.0'`,
      );
    }
    if (!table.findColumnByName('tags')) {
      await queryRunner.query(
        `ALTER TABLE ${escape('user_plugins')} ADD COLUMN ${escape('tags')} varchar(340) NOT NULL DEFAULT ''`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('user_plugins', 'tags');
    await queryRunner.dropColumn('user_plugins', 'version');
  }
}
