import { randomUUID } from 'node:crypto';
import { MigrationInterface, QueryRunner, Table } from 'typeorm';

/**
 * One row naming this database: a random id made when the database is migrated. A plugin
 * directory carries the id of the database it belongs to (plugin-directory-claim.ts), so an
 * instance on another database never removes or writes files there.
 */
export class CreateInstallation1763683860000 implements MigrationInterface {
  name = 'CreateInstallation1763683860000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'installation',
        columns: [{ name: 'id', type: 'varchar', length: '36', isPrimary: true }],
      }),
      true,
    );
    await queryRunner.query('INSERT INTO installation (id) VALUES (?)', [randomUUID()]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('installation');
  }
}
