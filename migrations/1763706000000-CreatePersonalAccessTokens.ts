import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { foreignKeyToUser, id, timestamp } from './columns';

/**
 * Issue 45: personal access tokens for automation. `token_hash` is the SHA-256 of the secret
 * (unique: the guard's one lookup); `(user_id, expires_at)` serves a user's list and count.
 */
export class CreatePersonalAccessTokens1763706000000 implements MigrationInterface {
  name = 'CreatePersonalAccessTokens1763706000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'personal_access_tokens',
        columns: [
          id(),
          { name: 'user_id', type: 'integer' },
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'token_hash', type: 'varchar', length: '64' },
          { name: 'scopes', type: 'varchar', length: '32' },
          timestamp('created_at'),
          timestamp('expires_at'),
          timestamp('last_used_at', true),
          { name: 'credential_generation', type: 'integer' },
        ],
        uniques: [{ name: 'uq_personal_access_tokens_hash', columnNames: ['token_hash'] }],
        indices: [{ name: 'idx_personal_access_tokens_user', columnNames: ['user_id', 'expires_at'] }],
        foreignKeys: [foreignKeyToUser('user_id')],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('personal_access_tokens', true);
  }
}
