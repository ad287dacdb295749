import { Logger } from '@nestjs/common';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { identityKey, MAX_IDENTITY_KEY_LENGTH } from '../src/users/identity-key';
import { dropMysqlUniqueIndexesOn } from './columns';

interface ColumnSql {
  name: string;
  sqlite: string;
  mysql: string;
}

/**
 * Keys are compared byte for byte on MySQL too (its default collation would fold accents,
 * so the two databases would disagree about who `álice` is). Added with plain ADD COLUMN on
 * both databases: TypeORM's SQLite addColumn rebuilds the table, and with foreign keys on
 * that would cascade into every table that references `users`.
 */
const COLUMNS: ColumnSql[] = [
  {
    name: 'name_key',
    sqlite: 'varchar(255)',
    mysql: 'varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL',
  },
  {
    name: 'email_key',
    sqlite: 'varchar(255)',
    mysql: 'varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL',
  },
  { name: 'otp_issued_at', sqlite: 'datetime', mysql: 'datetime(3) NULL' },
  { name: 'otp_hour_start', sqlite: 'datetime', mysql: 'datetime(3) NULL' },
  { name: 'otp_hour_count', sqlite: 'integer NOT NULL DEFAULT (0)', mysql: 'int NOT NULL DEFAULT 0' },
  { name: 'otp_day_start', sqlite: 'datetime', mysql: 'datetime(3) NULL' },
  { name: 'otp_day_count', sqlite: 'integer NOT NULL DEFAULT (0)', mysql: 'int NOT NULL DEFAULT 0' },
  {
    name: 'password_set_via_otp',
    sqlite: 'boolean NOT NULL DEFAULT (0)',
    mysql: 'tinyint NOT NULL DEFAULT 0',
  },
  { name: 'deactivated_at', sqlite: 'datetime', mysql: 'datetime(3) NULL' },
];

/**
 * Usernames and emails get one normalised key each (NFKC + case folding) with a unique
 * index, used for every lookup; the OTP gets a life (issued_at) and per-account issue
 * counters; "email confirmed" (is_active) and "taken out of service" (deactivated_at) part.
 *
 * Existing rows get their keys here. Rows whose key another, older row already has cannot
 * keep it under a unique index: they get none (they are found by neither name nor email
 * until an operator renames them) and are reported in the log, without failing the start.
 */
export class AccountKeysOtpLifecycle1763683500000 implements MigrationInterface {
  name = 'AccountKeysOtpLifecycle1763683500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    for (const column of COLUMNS) {
      await queryRunner.query(
        `ALTER TABLE users ADD COLUMN ${column.name} ${mysql ? column.mysql : column.sqlite}`,
      );
    }
    await fillKeys(queryRunner);
    // The first migration made `name` and `email` unique under MySQL's accent- and case-folding
    // collation, which would refuse names the keys tell apart. On SQLite those indexes compare
    // bytes, so the key indexes already imply them and they stay.
    if (mysql) await dropMysqlUniqueIndexesOn(queryRunner, 'users', ['name', 'email']);
    await queryRunner.query('CREATE UNIQUE INDEX uq_users_name_key ON users (name_key)');
    await queryRunner.query('CREATE UNIQUE INDEX uq_users_email_key ON users (email_key)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    for (const index of ['uq_users_name_key', 'uq_users_email_key']) {
      await queryRunner.query(mysql ? `DROP INDEX ${index} ON users` : `DROP INDEX ${index}`);
    }
    for (const column of [...COLUMNS].reverse()) {
      await queryRunner.query(`ALTER TABLE users DROP COLUMN ${column.name}`);
    }
  }
}

async function fillKeys(queryRunner: QueryRunner): Promise<void> {
  const logger = new Logger('Migrations');
  const rows = (await queryRunner.query('SELECT id, name, email FROM users ORDER BY id')) as Array<{
    id: number;
    name: string;
    email: string;
  }>;
  const owners = { name: new Map<string, number>(), email: new Map<string, number>() };
  for (const row of rows) {
    const keys = { name: keyOf(row.name), email: keyOf(row.email) };
    const kept: Record<'name' | 'email', string | null> = { name: null, email: null };
    for (const field of ['name', 'email'] as const) {
      const key = keys[field];
      const owner = key === null ? undefined : owners[field].get(key);
      if (key === null || owner !== undefined) {
        logger.warn(
          key === null
            ? `User ${row.id}: the ${field} has no usable key; it cannot be found by ${field} until it is changed`
            : `User ${row.id} has the same ${field} as user ${owner} once case and Unicode forms are ignored; ` +
                `it cannot be found by ${field} until it is changed`,
        );
        continue;
      }
      owners[field].set(key, row.id);
      kept[field] = key;
    }
    await queryRunner.query('UPDATE users SET name_key = ?, email_key = ? WHERE id = ?', [
      kept.name,
      kept.email,
      row.id,
    ]);
  }
}

function keyOf(text: string): string | null {
  const key = identityKey(text);
  return key.length > MAX_IDENTITY_KEY_LENGTH ? null : key;
}
