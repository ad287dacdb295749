import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 21: `users.locked_at`, set when an account passes the bound on failed logins and
 * cleared by a password change through the OTP mail. Plain ADD COLUMN on both databases
 * (TypeORM's SQLite addColumn rebuilds the table, which would cascade through the foreign
 * keys that reference `users`).
 */
export class AccountLock1763696000000 implements MigrationInterface {
  name = 'AccountLock1763696000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Runs again cleanly when its record is gone (or the start-up schema upgrade added it).
    if (await queryRunner.hasColumn('users', 'locked_at')) return;
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    await queryRunner.query(
      `ALTER TABLE users ADD COLUMN locked_at ${mysql ? 'datetime(3) NULL' : 'datetime'}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (!(await queryRunner.hasColumn('users', 'locked_at'))) return;
    await queryRunner.query('ALTER TABLE users DROP COLUMN locked_at');
  }
}
