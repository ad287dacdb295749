import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

/**
 * Issue 42: the validator's warnings on an accepted version (`unbound-name`, ...), kept with the
 * version as JSON text so its uploader and admins see them (docs/decisions/unbound-names.md).
 * Null on versions uploaded before they were kept, until a re-check of the rules fills them.
 */
export class PluginVersionWarnings1763709000000 implements MigrationInterface {
  name = 'PluginVersionWarnings1763709000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('plugin_versions');
    if (!table || table.findColumnByName('validator_warnings')) return;
    if (queryRunner.connection.options.type === 'better-sqlite3') {
      // SQLite's own ADD COLUMN: TypeORM's addColumn rebuilds the table.
      await queryRunner.query('ALTER TABLE "plugin_versions" ADD COLUMN "validator_warnings" text');
    } else {
      await queryRunner.addColumn(
        'plugin_versions',
        new TableColumn({ name: 'validator_warnings', type: 'text', isNullable: true }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('plugin_versions', 'validator_warnings');
  }
}
