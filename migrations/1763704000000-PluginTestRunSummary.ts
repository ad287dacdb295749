import { MigrationInterface, QueryRunner } from 'typeorm';

const REQUESTER_INDEX = 'idx_plugin_test_runs_requester';

/**
 * Issue 41: what a list of a version's test-runs shows of each report, beside the report
 * (which is bounded but large: thousands of events), so a page of runs reads no report:
 * `flagged_events` (events of both lists flagged for the reviewer) and `ended_by_limit` (the
 * report's `limit`). Written with the report; null on a row whose report a server without
 * these columns wrote, which is summarised from its report when read. The index finds each
 * reviewer's newest run of a version (the diff's `test_runs`) without reading every run.
 */
export class PluginTestRunSummary1763704000000 implements MigrationInterface {
  name = 'PluginTestRunSummary1763704000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const runs = await queryRunner.getTable('plugin_test_runs');
    if (!runs) return;
    // Plain ADD COLUMN on both databases: TypeORM's SQLite addColumn rebuilds the table.
    if (!runs.findColumnByName('flagged_events')) {
      await queryRunner.query('ALTER TABLE plugin_test_runs ADD COLUMN flagged_events integer NULL');
    }
    if (!runs.findColumnByName('ended_by_limit')) {
      await queryRunner.query('ALTER TABLE plugin_test_runs ADD COLUMN ended_by_limit varchar(16) NULL');
    }
    if (!runs.indices.some((index) => index.name === REQUESTER_INDEX)) {
      await queryRunner.query(
        `CREATE INDEX ${REQUESTER_INDEX} ON plugin_test_runs (plugin_id, version, requested_by_user_id, id)`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type === 'mysql';
    await queryRunner.query(
      mysql ? `DROP INDEX ${REQUESTER_INDEX} ON plugin_test_runs` : `DROP INDEX IF EXISTS ${REQUESTER_INDEX}`,
    );
    await queryRunner.query('ALTER TABLE plugin_test_runs DROP COLUMN ended_by_limit');
    await queryRunner.query('ALTER TABLE plugin_test_runs DROP COLUMN flagged_events');
  }
}
