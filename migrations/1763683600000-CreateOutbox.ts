import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { id, timestamp } from './columns';

export class CreateOutbox1763683600000 implements MigrationInterface {
  name = 'CreateOutbox1763683600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'outbox_jobs',
        columns: [
          id(),
          { name: 'kind', type: 'varchar', length: '64' },
          { name: 'payload', type: 'text' },
          { name: 'attempts', type: 'integer', default: 0 },
          timestamp('next_attempt_at'),
          timestamp('locked_until', true),
          { name: 'last_error', type: 'varchar', length: '255', isNullable: true },
          timestamp('created_at'),
        ],
        indices: [{ name: 'idx_outbox_jobs_next_attempt_at', columnNames: ['next_attempt_at'] }],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('outbox_jobs');
  }
}
