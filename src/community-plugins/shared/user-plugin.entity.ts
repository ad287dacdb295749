import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { MAX_IDENTITY_KEY_LENGTH } from '../../users/identity-key';
import {
  DEFAULT_VERSION,
  EXECUTION_TIMEOUT,
  MAX_TAGS,
  TAG_MAX_LENGTH,
  VERSION_MAX_LENGTH,
} from './plugin-constants';
import type { PluginGroup, PluginStatus, PluginType } from './plugin-constants';

/** Room for the most tags with their commas: `,` + 10 x (32 + `,`). */
const TAGS_COLUMN_LENGTH = 1 + MAX_TAGS * (TAG_MAX_LENGTH + 1) + 9;

/** The stored form of a tag list (the views read it; `tag=` reads plugin_tags). */
export const storedTags = (tags: readonly string[]): string =>
  tags.length === 0 ? '' : `,${tags.join(',')},`;

/** A stored tag list read back; the listing reads its rows with this too. */
export const parseStoredTags = (stored: string | null): string[] =>
  typeof stored === 'string' ? stored.split(',').filter((tag) => tag !== '') : [];

const TAGS_TRANSFORMER = {
  to: (tags: readonly string[] | undefined) => (tags === undefined ? undefined : storedTags(tags)),
  from: parseStoredTags,
};

/**
 * An uploaded plugin: what the catalogue serves (its latest approved version, else its
 * newest version: `version`, `sha256`, `file_path`, `status`), plus its metadata. Every
 * version, this one included, is a row of plugin_versions. The source lives in a file under COMMUNITY_PLUGIN_DIR, never in a
 * column. Columns that an older table may lack are nullable or have a default, so the
 * start-up schema upgrade can add them to tables that already hold rows.
 */
@Entity('user_plugins')
export class UserPlugin {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 128 })
  name!: string;

  /**
   * identityKey(name): names compare as user names do (NFKC and case folding), under a unique
   * index. Null only for an old row whose name collided with an older one (reported when the
   * key was added): it keeps its name, and no new plugin can take it.
   */
  @Column({ name: 'name_key', type: 'varchar', length: MAX_IDENTITY_KEY_LENGTH, nullable: true })
  nameKey!: string | null;

  @Column({ type: 'text' })
  description!: string;

  @Column({ name: 'group', type: 'varchar', length: 16 })
  group!: PluginGroup;

  @Column({ name: 'type', type: 'varchar', length: 16 })
  type!: PluginType;

  @Column({ type: 'varchar', length: 128 })
  author!: string;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status!: PluginStatus;

  @Column({ name: 'rejection_reason', type: 'text', nullable: true })
  rejectionReason!: string | null;

  @Column({ name: 'user_id', type: 'int' })
  userId!: number;

  @Column({ name: 'reviewed_by_user_id', type: 'int', nullable: true })
  reviewedByUserId!: number | null;

  @Column({ name: 'reviewed_at', type: 'datetime', precision: 3, nullable: true })
  reviewedAt!: Date | null;

  @Column({ name: 'execution_timeout', type: 'int', default: EXECUTION_TIMEOUT.default })
  executionTimeout!: number;

  /** Hex SHA-256 of the stored file; null only on rows from before hashes were recorded. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  sha256!: string | null;

  @Column({ type: 'varchar', length: VERSION_MAX_LENGTH, default: DEFAULT_VERSION })
  version!: string;

  /**
   * Stored as `,tag1,tag2,` (empty for none), in their order, for the views; `tag=` finds a
   * plugin through its rows in plugin_tags (catalogue/index/plugin-search-index.ts), written with this column.
   */
  @Column({ type: 'varchar', length: TAGS_COLUMN_LENGTH, default: '', transformer: TAGS_TRANSFORMER })
  tags!: string[];

  /** Relative to COMMUNITY_PLUGIN_DIR. Server-side only: no view carries it. */
  @Column({ name: 'file_path', type: 'varchar', length: 255 })
  filePath!: string;

  /**
   * Set by the reconciler (or the source endpoint) when the file is not on disk, cleared when
   * it is back: admins see such a plugin as broken, and it cannot be approved.
   */
  @Column({ name: 'file_missing_at', type: 'datetime', precision: 3, nullable: true })
  fileMissingAt!: Date | null;

  /**
   * Set by the reconciler when the served file no longer has the approved digest, cleared when
   * it has again: such a plugin is broken, out of the catalogue and the manifest.
   */
  @Column({ name: 'file_altered_at', type: 'datetime', precision: 3, nullable: true })
  fileAlteredAt!: Date | null;

  /** The version waiting for review, if one does; at most one at a time. */
  @Column({ name: 'pending_version', type: 'varchar', length: VERSION_MAX_LENGTH, nullable: true })
  pendingVersion!: string | null;

  /** Sum and count of the ratings, kept with each rating in one transaction. */
  @Column({ name: 'rating_total', type: 'int', default: 0 })
  ratingTotal!: number;

  @Column({ name: 'ratings_count', type: 'int', default: 0 })
  ratingsCount!: number;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  /** Null only on rows from before the column existed; views fall back to created_at. */
  @Column({ name: 'updated_at', type: 'datetime', precision: 3, nullable: true })
  updatedAt!: Date | null;

  /**
   * Not a column: the re-check's verdict on the served file (issue 18), attached for the admin
   * view only by PluginViewInterceptor; undefined elsewhere.
   */
  recheck?: {
    rulesVersion: number;
    findings: Array<{ rule: string; message: string; line: number; column: number }>;
  } | null;
}
