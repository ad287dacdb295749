import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';
import { timestamp } from './columns';

/**
 * When a plugin's file is found missing, the row says so (file_missing_at) instead of the
 * plugin answering 409 to every review: admins see it as broken, and may delete it.
 */
export class PluginFileMissing1763683850000 implements MigrationInterface {
  name = 'PluginFileMissing1763683850000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // A plugin table older than the migrations gets its columns from the start-up upgrade instead.
    const table = await queryRunner.getTable('user_plugins');
    if (!table || table.findColumnByName('file_missing_at')) return;
    if (queryRunner.connection.options.type === 'better-sqlite3') {
      // SQLite's own ADD COLUMN: TypeORM's addColumn rebuilds the table, losing the name's NOCASE collation.
      await queryRunner.query('ALTER TABLE "user_plugins" ADD COLUMN "file_missing_at" datetime');
    } else {
      await queryRunner.addColumn('user_plugins', new TableColumn(timestamp('file_missing_at', true)));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('user_plugins', 'file_missing_at');
  }
}
