import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { TestRunLimit, TestRunStatus } from '../plugin-jail';

/** One reviewer's test-run of a plugin version in the jail; the newest of a version is the one shown. */
@Entity('plugin_test_runs')
export class PluginTestRun {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'plugin_id', type: 'int' })
  pluginId!: number;

  @Column({ type: 'varchar', length: 32 })
  version!: string;

  /** The bytes run, as their digest check read them. */
  @Column({ type: 'varchar', length: 64 })
  sha256!: string;

  @Column({ type: 'varchar', length: 16 })
  status!: TestRunStatus;

  @Column({ name: 'requested_by_user_id', type: 'int' })
  requestedByUserId!: number;

  /** JSON of the report once the run ended (TestRunReport without its status). */
  @Column({ type: 'text', nullable: true })
  report!: string | null;

  /**
   * The report's summary, written with it, so a list of runs reads no report: its events of
   * both lists flagged for the reviewer (0 until it ends), and the limit that ended it. Null
   * on a row whose report a server without these columns wrote: read from the report then
   * (testRunSummary).
   */
  @Column({ name: 'flagged_events', type: 'int', nullable: true })
  flaggedEvents!: number | null;

  @Column({ name: 'ended_by_limit', type: 'varchar', length: 16, nullable: true })
  endedByLimit!: TestRunLimit | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'finished_at', type: 'datetime', precision: 3, nullable: true })
  finishedAt!: Date | null;
}
