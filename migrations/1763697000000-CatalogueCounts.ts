import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import {
  CATALOGUE_COUNTS_TABLE,
  recountLists,
} from '../src/community-plugins/catalogue/index/catalogue-counts';

/**
 * Issue 22: the unfiltered catalogue's size is kept in `catalogue_counts`
 * (src/community-plugins/catalogue-counts.ts) rather than counted for every page. One row per
 * list, counted here; a plugin table too old to have the counted columns gets zeros, which the
 * count at every start puts right once the schema upgrade has added them. Idempotent.
 */
export class CatalogueCounts1763697000000 implements MigrationInterface {
  name = 'CatalogueCounts1763697000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: CATALOGUE_COUNTS_TABLE,
        columns: [
          { name: 'name', type: 'varchar', length: '16', isPrimary: true },
          { name: 'plugins', type: 'integer', default: 0 },
          { name: 'changes', type: 'integer', default: 0 },
        ],
      }),
      true,
    );
    const plugins = await queryRunner.getTable('user_plugins');
    const countable = ['status', 'file_altered_at'].every((column) => plugins?.findColumnByName(column));
    const run = (sql: string, params?: unknown[]) => queryRunner.query(sql, params) as Promise<unknown>;
    if (countable) {
      await recountLists(run);
    } else {
      for (const view of ['approved', 'listed']) {
        const [present] = (await run(
          `SELECT 1 AS \`one\` FROM \`${CATALOGUE_COUNTS_TABLE}\` WHERE \`name\` = ?`,
          [view],
        )) as unknown[];
        if (!present) await run(`INSERT INTO \`${CATALOGUE_COUNTS_TABLE}\` (\`name\`) VALUES (?)`, [view]);
      }
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable(CATALOGUE_COUNTS_TABLE, true);
  }
}
