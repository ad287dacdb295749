import { MigrationInterface, QueryRunner } from 'typeorm';
import {
  CATALOGUE_COUNTS_TABLE,
  SHOWN_CHANGES,
} from '../src/community-plugins/catalogue/index/catalogue-counts';

const DIGEST_INDEX = 'idx_user_plugins_sha256';

/**
 * Issue 44: files are served by digest (`GET /community-plugins/files/<sha256>`), found through
 * an index on the served digest rather than by reading every plugin; and the `shown` row of
 * `catalogue_counts` counts the writes that change what readers see without moving a plugin
 * between lists or appending to the audit chain (ratings, the missing-file mark), so the
 * answers' ETags change with them. Idempotent.
 */
export class FilesByDigest1763705000000 implements MigrationInterface {
  name = 'FilesByDigest1763705000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const plugins = await queryRunner.getTable('user_plugins');
    if (plugins && !plugins.indices.some((index) => index.name === DIGEST_INDEX)) {
      await queryRunner.query(`CREATE INDEX \`${DIGEST_INDEX}\` ON \`user_plugins\` (\`sha256\`)`);
    }
    const [present] = (await queryRunner.query(
      `SELECT 1 AS \`one\` FROM \`${CATALOGUE_COUNTS_TABLE}\` WHERE \`name\` = ?`,
      [SHOWN_CHANGES],
    )) as unknown[];
    if (!present) {
      await queryRunner.query(`INSERT INTO \`${CATALOGUE_COUNTS_TABLE}\` (\`name\`) VALUES (?)`, [
        SHOWN_CHANGES,
      ]);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM \`${CATALOGUE_COUNTS_TABLE}\` WHERE \`name\` = ?`, [SHOWN_CHANGES]);
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    await queryRunner.query(
      mysql
        ? `DROP INDEX \`${DIGEST_INDEX}\` ON \`user_plugins\``
        : `DROP INDEX IF EXISTS \`${DIGEST_INDEX}\``,
    );
  }
}
