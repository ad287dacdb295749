import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `users.credential_generation`, raised by every change that ends a user's sessions (a new
 * password, a claim, deactivation, promotion, demotion), and the generation each login token
 * was issued under (`user_login_tokens.credential_generation`): the guard honours a token only
 * of its user's current generation, so a login that read the old state and records its token
 * after the change records a dead one. Plain ADD COLUMN on both databases (see AccountLock).
 */
export class CredentialGeneration1763700000000 implements MigrationInterface {
  name = 'CredentialGeneration1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      // Runs again cleanly when its record is gone (or the start-up schema upgrade added it).
      if (await queryRunner.hasColumn(table, 'credential_generation')) continue;
      await queryRunner.query(`ALTER TABLE ${table} ADD COLUMN credential_generation int NOT NULL DEFAULT 0`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      if (!(await queryRunner.hasColumn(table, 'credential_generation'))) continue;
      await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN credential_generation`);
    }
  }
}

const TABLES = ['users', 'user_login_tokens'] as const;
