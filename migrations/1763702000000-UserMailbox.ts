import { MigrationInterface, QueryRunner } from 'typeorm';

const MAILBOX_INDEX = 'idx_users_mailbox';

/**
 * `users.mailbox` (issue 30): the mailbox an account's address reaches (src/users/mailbox.ts),
 * stored, so the rules about one person (self-review, rating one's own plugin) compare it in
 * the decision's own transaction with one query by primary keys. Compared byte for byte on
 * MySQL, as the keys are. The values are filled in at start-up (src/users/mailbox-upgrade.ts),
 * which also completes rows a replica of an older version writes meanwhile: the index makes
 * that start-up look for rows without one a lookup rather than a scan of every user.
 */
export class UserMailbox1763702000000 implements MigrationInterface {
  name = 'UserMailbox1763702000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    const users = await queryRunner.getTable('users');
    if (!users) return;
    if (!users.findColumnByName('mailbox')) {
      // Plain ADD COLUMN on both databases: TypeORM's SQLite addColumn rebuilds the table.
      await queryRunner.query(
        `ALTER TABLE users ADD COLUMN mailbox ${
          mysql ? 'varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL' : 'varchar(255) NULL'
        }`,
      );
    }
    if (!users.indices.some((index) => index.name === MAILBOX_INDEX)) {
      await queryRunner.query(`CREATE INDEX ${MAILBOX_INDEX} ON users (mailbox)`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    await queryRunner.query(
      mysql ? `DROP INDEX ${MAILBOX_INDEX} ON users` : `DROP INDEX IF EXISTS ${MAILBOX_INDEX}`,
    );
    await queryRunner.query('ALTER TABLE users DROP COLUMN mailbox');
  }
}
