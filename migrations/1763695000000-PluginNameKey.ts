import { MigrationInterface, QueryRunner } from 'typeorm';
import { dropMysqlUniqueIndexesOn } from './columns';

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
    // The first migration made `name` unique under MySQL's accent- and case-folding collation,
    // which would refuse names the key tells apart (`émile` and `emile`). On SQLite that index
    // compares with NOCASE (ASCII case only), which the key index already implies, so it stays.
    if (mysql) await dropMysqlUniqueIndexesOn(queryRunner, 'user_plugins', ['name']);
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
