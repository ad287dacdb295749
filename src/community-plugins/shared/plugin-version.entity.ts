import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { VERSION_MAX_LENGTH } from './plugin-constants';
import type { PluginStatus } from './plugin-constants';
import type { Violation } from '../../plugin-validator';

/**
 * One version of a plugin: immutable bytes in a file of its own (written and synced before
 * this row commits), addressed by their sha256. Only the review columns ever change.
 */
@Entity('plugin_versions')
export class PluginVersion {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'plugin_id', type: 'int' })
  pluginId!: number;

  @Column({ type: 'varchar', length: VERSION_MAX_LENGTH })
  version!: string;

  /** Null only for a version made from a row older than hashes, until start-up computes it. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  sha256!: string | null;

  /** Relative to COMMUNITY_PLUGIN_DIR; in no view. */
  @Column({ name: 'file_path', type: 'varchar', length: 255 })
  filePath!: string;

  @Column({ type: 'text', nullable: true })
  changelog!: string | null;

  @Column({ type: 'varchar', length: 16 })
  status!: PluginStatus;

  /** The uploader of this version. */
  @Column({ name: 'user_id', type: 'int' })
  userId!: number;

  @Column({ name: 'reviewed_by_user_id', type: 'int', nullable: true })
  reviewedByUserId!: number | null;

  @Column({ name: 'reviewed_at', type: 'datetime', precision: 3, nullable: true })
  reviewedAt!: Date | null;

  @Column({ name: 'rejection_reason', type: 'text', nullable: true })
  rejectionReason!: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  /**
   * The validator's warnings on these bytes (an accepted file only: `unbound-name`, ...), from its
   * upload or the last re-check of the rules; null when never kept (versions older than them).
   * Shown to the uploader and admins, never in a public view.
   */
  @Column({ name: 'validator_warnings', type: 'simple-json', nullable: true })
  validatorWarnings!: Violation[] | null;
}
