import { MigrationInterface, QueryRunner } from 'typeorm';

const OLD = 'email_confirmation_by_user';

/**
 * Issue 21: an activation link is written for the address asked about, whether or not an
 * account has it (see docs/decisions/activation-links-by-address.md), so a record names the
 * address's key (`email_key`, as `users.email_key`) instead of a user. Records of existing
 * users keep their keys, so links already mailed still work. The table is built anew (SQLite
 * cannot drop a column that has a foreign key); nothing references it.
 */
export class ActivationLinksByAddress1763698000000 implements MigrationInterface {
  name = 'ActivationLinksByAddress1763698000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    const current = await queryRunner.getTable('email_confirmation');
    // Runs again cleanly when its record is gone.
    if (current?.findColumnByName('email_key')) return;
    if (current) await queryRunner.query(`ALTER TABLE email_confirmation RENAME TO ${OLD}`);
    await queryRunner.query(
      mysql
        ? `CREATE TABLE email_confirmation (
             id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
             key_value varchar(36) NOT NULL,
             email_key varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
             expiration_time datetime(3) NOT NULL
           ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`
        : `CREATE TABLE email_confirmation (
             id integer PRIMARY KEY AUTOINCREMENT NOT NULL,
             key_value varchar(36) NOT NULL,
             email_key varchar(255) NOT NULL,
             expiration_time datetime NOT NULL
           )`,
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX uq_email_confirmation_key_value ON email_confirmation (key_value)',
    );
    // The newest record of an address is the live one; the sweep deletes by expiry.
    await queryRunner.query(
      'CREATE INDEX idx_email_confirmation_email_key ON email_confirmation (email_key, expiration_time)',
    );
    await queryRunner.query(
      'CREATE INDEX idx_email_confirmation_expiration ON email_confirmation (expiration_time)',
    );
    if (current) {
      await queryRunner.query(
        `INSERT INTO email_confirmation (id, key_value, email_key, expiration_time)
         SELECT c.id, c.key_value, u.email_key, c.expiration_time
         FROM ${OLD} c JOIN users u ON u.id = c.user_id
         WHERE u.email_key IS NOT NULL`,
      );
      await queryRunner.query(`DROP TABLE ${OLD}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    await queryRunner.query(`ALTER TABLE email_confirmation RENAME TO ${OLD}`);
    await queryRunner.query(
      mysql
        ? `CREATE TABLE email_confirmation (
             id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
             key_value varchar(36) NOT NULL UNIQUE,
             expiration_time datetime(3) NOT NULL,
             user_id int NOT NULL,
             INDEX idx_email_confirmation_user_id (user_id),
             FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
           ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`
        : `CREATE TABLE email_confirmation (
             id integer PRIMARY KEY AUTOINCREMENT NOT NULL,
             key_value varchar(36) NOT NULL UNIQUE,
             expiration_time datetime NOT NULL,
             user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE
           )`,
    );
    if (!mysql) {
      await queryRunner.query('CREATE INDEX idx_email_confirmation_user_id ON email_confirmation (user_id)');
    }
    // The newest record of each address that has a user; records of other addresses go.
    await queryRunner.query(
      `INSERT INTO email_confirmation (key_value, expiration_time, user_id)
       SELECT c.key_value, c.expiration_time, u.id
       FROM ${OLD} c JOIN users u ON u.email_key = c.email_key
       WHERE NOT EXISTS (
         SELECT 1 FROM ${OLD} newer WHERE newer.email_key = c.email_key
           AND (newer.expiration_time > c.expiration_time
             OR (newer.expiration_time = c.expiration_time AND newer.id > c.id))
       )`,
    );
    await queryRunner.query(`DROP TABLE ${OLD}`);
  }
}
