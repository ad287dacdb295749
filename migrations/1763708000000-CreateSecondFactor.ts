import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { foreignKeyToUser, id, timestamp } from './columns';

/**
 * Issue 45: a second factor (TOTP). `user_totp` holds one row per user who began enrolment:
 * pending while `enabled_at` is null; `last_step` is the newest time step a code was accepted
 * for (replay). `user_recovery_codes` keeps the SHA-256 of each unused recovery code.
 */
export class CreateSecondFactor1763708000000 implements MigrationInterface {
  name = 'CreateSecondFactor1763708000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'user_totp',
        columns: [
          { name: 'user_id', type: 'integer', isPrimary: true },
          { name: 'secret', type: 'varchar', length: '64' },
          timestamp('created_at'),
          timestamp('enabled_at', true),
          { name: 'last_step', type: 'integer', isNullable: true },
        ],
        foreignKeys: [foreignKeyToUser('user_id')],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'user_recovery_codes',
        columns: [
          id(),
          { name: 'user_id', type: 'integer' },
          { name: 'code_hash', type: 'varchar', length: '64' },
        ],
        uniques: [{ name: 'uq_user_recovery_codes', columnNames: ['user_id', 'code_hash'] }],
        foreignKeys: [foreignKeyToUser('user_id')],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('user_recovery_codes', true);
    await queryRunner.dropTable('user_totp', true);
  }
}
