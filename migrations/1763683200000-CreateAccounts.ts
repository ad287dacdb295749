import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { id, foreignKeyToUser, timestamp } from './columns';

export class CreateAccounts1763683200000 implements MigrationInterface {
  name = 'CreateAccounts1763683200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'users',
        columns: [
          id(),
          { name: 'name', type: 'varchar', length: '64', isUnique: true },
          { name: 'email', type: 'varchar', length: '254', isUnique: true },
          { name: 'password', type: 'varchar', length: '100', isNullable: true },
          { name: 'is_active', type: 'boolean', default: false },
          { name: 'is_admin', type: 'boolean', default: false },
          { name: 'otp_secret_key', type: 'varchar', length: '64' },
          { name: 'otp_failed_attempts', type: 'integer', default: 0 },
          timestamp('created_at'),
        ],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'user_login_tokens',
        columns: [
          id(),
          { name: 'user_id', type: 'integer' },
          { name: 'token_hash', type: 'varchar', length: '64', isUnique: true },
          timestamp('expires_at'),
          timestamp('created_at'),
        ],
        foreignKeys: [foreignKeyToUser('user_id')],
        indices: [{ name: 'idx_user_login_tokens_user_id', columnNames: ['user_id'] }],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'email_confirmation',
        columns: [
          id(),
          { name: 'key_value', type: 'varchar', length: '36', isUnique: true },
          timestamp('expiration_time'),
          { name: 'user_id', type: 'integer' },
        ],
        foreignKeys: [foreignKeyToUser('user_id')],
        indices: [{ name: 'idx_email_confirmation_user_id', columnNames: ['user_id'] }],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('email_confirmation');
    await queryRunner.dropTable('user_login_tokens');
    await queryRunner.dropTable('users');
  }
}
