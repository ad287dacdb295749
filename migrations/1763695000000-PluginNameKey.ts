import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plugin names compare as user names do (issue 21): `Scanner` and full-width `Ｓｃａｎｎｅｒ` are one
 * name. Each plugin gets name_key under a unique index, compared byte for byte on MySQL too;
 * the keys are filled in at start-up (src/community-plugins/plugin-name-keys.ts), which also
 * completes an older table that the schema upgrade gave the column.
 */
export class PluginNameKey1763695000000 implements MigrationInterface {
  name = 'PluginNameKey1763695000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    const plugins = await queryRunner.getTable('user_plugins');
    if (!plugins) return;
    if (!plugins.findColumnByName('name_key')) {
      // Plain ADD COLUMN on both databases: TypeORM's addColumn rebuilds a SQLite table and loses NOCASE.
      await queryRunner.query(
        `ALTER TABLE user_plugins ADD COLUMN name_key ${
          mysql ? 'varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL' : 'varchar(255) NULL'
        }`,
      );
    }
    if (mysql) await dropCollatingNameIndex(queryRunner);
    // The keys and their unique index: at every start, right after the migrations.
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    await queryRunner.query(
      mysql
        ? 'DROP INDEX IF EXISTS uq_user_plugins_name_key ON user_plugins'
        : 'DROP INDEX IF EXISTS uq_user_plugins_name_key',
    );
    await queryRunner.query('ALTER TABLE user_plugins DROP COLUMN name_key');
  }
}

/**
 * The first migration made `name` unique under MySQL's accent- and case-folding collation, which
 * would refuse names the key tells apart (`émile` and `emile`). On SQLite that index compares
 * with NOCASE (ASCII case only), which the key index already implies, so it stays.
 */
async function dropCollatingNameIndex(queryRunner: QueryRunner): Promise<void> {
  const indexes = (await queryRunner.query('SHOW INDEX FROM user_plugins')) as Array<{
    Key_name: string;
    Column_name: string;
    Non_unique: number | string;
  }>;
  const names = new Set(
    indexes
      .filter(
        (index) =>
          Number(index.Non_unique) === 0 && index.Key_name !== 'PRIMARY' && index.Column_name === 'name',
      )
      .map((index) => index.Key_name),
  );
  for (const name of names) await queryRunner.query(`ALTER TABLE user_plugins DROP INDEX \`${name}\``);
}
