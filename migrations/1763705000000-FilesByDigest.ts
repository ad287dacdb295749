import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { SHOWN_CHANGES_TABLE } from '../src/community-plugins/catalogue/index/shown-changes';

const DIGEST_INDEX = 'idx_user_plugins_sha256';

/**
 * Issue 44: files are served by digest (`GET /community-plugins/files/<sha256>`), found through
 * an index on the served digest rather than by reading every plugin; and `plugin_shown_changes`
 * (one row) counts the writes that change what readers see without moving a plugin between
 * lists or appending to the audit chain (src/community-plugins/catalogue/index/shown-changes.ts),
 * so the answers' ETags change with them. Idempotent.
 */
export class FilesByDigest1763705000000 implements MigrationInterface {
  name = 'FilesByDigest1763705000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const plugins = await queryRunner.getTable('user_plugins');
    // A table older than digests gets its sha256 column from the schema upgrade after the
    // migrations, and no index: the lookup is then the approved rows' scan, still correct.
    if (
      plugins?.findColumnByName('sha256') &&
      !plugins.indices.some((index) => index.name === DIGEST_INDEX)
    ) {
      await queryRunner.query(`CREATE INDEX \`${DIGEST_INDEX}\` ON \`user_plugins\` (\`sha256\`)`);
    }
    await queryRunner.createTable(
      new Table({
        name: SHOWN_CHANGES_TABLE,
        columns: [
          { name: 'id', type: 'integer', isPrimary: true },
          { name: 'changes', type: 'integer', default: 0 },
        ],
      }),
      true,
    );
    const [present] = (await queryRunner.query(
      `SELECT 1 AS \`one\` FROM \`${SHOWN_CHANGES_TABLE}\` WHERE \`id\` = 1`,
    )) as unknown[];
    if (!present)
      await queryRunner.query(`INSERT INTO \`${SHOWN_CHANGES_TABLE}\` (\`id\`, \`changes\`) VALUES (1, 0)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable(SHOWN_CHANGES_TABLE, true);
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    await queryRunner.query(
      mysql
        ? `DROP INDEX \`${DIGEST_INDEX}\` ON \`user_plugins\``
        : `DROP INDEX IF EXISTS \`${DIGEST_INDEX}\``,
    );
  }
}
