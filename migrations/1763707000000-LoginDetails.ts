import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 45: what a user sees of each login (`GET /api/v1/account/logins`): when it was last
 * used, and the client's address and User-Agent at login. Plain ADD COLUMN on both databases
 * (see AccountLock); rows from before have none of them (null).
 */
export class LoginDetails1763707000000 implements MigrationInterface {
  name = 'LoginDetails1763707000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    const types: Record<(typeof COLUMNS)[number], string> = {
      last_used_at: mysql ? 'datetime(3) NULL' : 'datetime',
      client_address: 'varchar(64) NULL',
      user_agent: 'varchar(255) NULL',
    };
    for (const column of COLUMNS) {
      // Runs again cleanly when its record is gone.
      if (await queryRunner.hasColumn(TABLE, column)) continue;
      await queryRunner.query(`ALTER TABLE ${TABLE} ADD COLUMN ${column} ${types[column]}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of COLUMNS) {
      if (!(await queryRunner.hasColumn(TABLE, column))) continue;
      await queryRunner.query(`ALTER TABLE ${TABLE} DROP COLUMN ${column}`);
    }
  }
}

const TABLE = 'user_login_tokens';
const COLUMNS = ['last_used_at', 'client_address', 'user_agent'] as const;
