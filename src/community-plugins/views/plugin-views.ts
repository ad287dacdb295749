import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import {
  DEFAULT_VERSION,
  MAX_TAGS,
  PLUGIN_GROUPS,
  PLUGIN_STATUSES,
  PLUGIN_TYPES,
  VERSION_MAX_LENGTH,
} from '../shared/plugin-constants';
import { FindingView } from '../dto/plugin-lifecycle.dto';
import type { PublicViewRow } from './public-view-columns';
import { parseStoredTags } from '../shared/user-plugin.entity';
import type { UserPlugin } from '../shared/user-plugin.entity';

/*
 * The three views, each the one before plus its own fields. A class is the type the view
 * function returns and, through its @ApiProperty, the schema the document shows: one
 * declaration, so the two cannot drift apart.
 */

/** What any authenticated user may see: metadata only. */
@ApiSchema({ name: 'PublicPlugin', description: 'What any signed-in user sees' })
export class PublicPluginView {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  description!: string;

  @ApiProperty({ enum: [...PLUGIN_GROUPS] })
  group!: string;

  @ApiProperty({ enum: [...PLUGIN_TYPES] })
  type!: string;

  @ApiProperty()
  author!: string;

  @ApiProperty({ enum: [...PLUGIN_STATUSES] })
  status!: string;

  @ApiProperty({
    enum: [...PLUGIN_STATUSES],
    description: 'The same value as `status`, under the name the marketplace client reads',
  })
  approval_status!: string;

  @ApiProperty({ maxLength: VERSION_MAX_LENGTH, example: DEFAULT_VERSION, description: 'As uploaded' })
  version!: string;

  @ApiProperty({
    type: [String],
    maxItems: MAX_TAGS,
    example: ['xss', 'headers'],
    description: 'Lower case, in the order uploaded; empty when none were given',
  })
  tags!: string[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Hex SHA-256 of the file; null on rows older than hashes',
  })
  sha256!: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ format: 'date-time' })
  updated_at!: string;

  @ApiProperty({ type: 'number', example: 4.5, description: 'Mean of the ratings, one decimal; 0 when none' })
  rating!: number;

  @ApiProperty({ type: 'integer' })
  ratings_count!: number;
}

/** The uploader also sees why a plugin was rejected. */
@ApiSchema({ name: 'OwnerPlugin', description: 'What the uploader sees' })
export class OwnerPluginView extends PublicPluginView {
  @ApiProperty({ type: String, nullable: true })
  rejection_reason!: string | null;

  @ApiProperty({ type: 'integer', description: 'The uploader' })
  user_id!: number;
}

/** Admins also see who reviewed it, when, and its resource limit. */
@ApiSchema({ name: 'AdminPlugin', description: 'What admins see' })
export class AdminPluginView extends OwnerPluginView {
  @ApiProperty({ type: 'integer', nullable: true })
  reviewed_by_user_id!: number | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  reviewed_at!: string | null;

  @ApiProperty({ type: 'integer', description: 'Seconds the plugin may run' })
  execution_timeout!: number;

  @ApiProperty({
    description:
      'True when the file is missing from the plugin directory: the plugin is broken, cannot be approved, ' +
      'and its source answers 410; deleting it frees its name',
  })
  file_missing!: boolean;

  @ApiProperty({
    description:
      'True when the served file no longer has the approved digest: out of the catalogue and the manifest until it has again',
  })
  file_altered!: boolean;

  @ApiProperty({ type: String, nullable: true, description: 'The version waiting for review, if any' })
  pending_version!: string | null;

  @ApiProperty({
    type: [FindingView],
    nullable: true,
    description:
      'What the validator rules of `recheck_rules_version` find in the served file when approved plugins are ' +
      'judged again (empty: it passes); null when it has not been re-checked. A plugin flagged by the current ' +
      'rules stays approved and is listed in the admin queue until an admin decides',
  })
  recheck_findings!: FindingView[] | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The rules version of `recheck_findings`' })
  recheck_rules_version!: number | null;
}

/**
 * Each view names its fields one by one, so a column added to the entity reaches no client
 * until a view chooses to show it. `file_path` and the source are in none of them.
 */
export function toPublicView(plugin: UserPlugin): PublicPluginView {
  return {
    id: plugin.id,
    name: plugin.name,
    description: plugin.description,
    group: plugin.group,
    type: plugin.type,
    author: plugin.author,
    status: plugin.status,
    approval_status: plugin.status,
    version: plugin.version,
    tags: [...plugin.tags],
    sha256: plugin.sha256,
    created_at: plugin.createdAt.toISOString(),
    // Rows from before updated_at existed were last changed when they were made.
    updated_at: (plugin.updatedAt ?? plugin.createdAt).toISOString(),
    rating: shownRating(plugin.ratingTotal, plugin.ratingsCount),
    ratings_count: plugin.ratingsCount,
  };
}

/** The mean of the ratings to one decimal; 0 when there are none. */
const shownRating = (total: number, count: number): number =>
  count > 0 ? Math.round((total * 10) / count) / 10 : 0;

/**
 * toPublicView straight from a listing row (`isoDate` turns the driver's datetime into ISO
 * text): the catalogue builds its answer's objects here, with no entity between the row and
 * the JSON. plugin-views.spec.ts holds it equal to toPublicView.
 */
export function publicViewOfRow(row: PublicViewRow, isoDate: (value: unknown) => string): PublicPluginView {
  const createdAt = isoDate(row.created_at);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    group: row.group,
    type: row.type,
    author: row.author,
    status: row.status,
    approval_status: row.status,
    version: row.version,
    tags: parseStoredTags(row.tags),
    sha256: row.sha256,
    created_at: createdAt,
    updated_at: row.updated_at === null ? createdAt : isoDate(row.updated_at),
    rating: shownRating(row.rating_total, row.ratings_count),
    ratings_count: row.ratings_count,
  };
}

export function toOwnerView(plugin: UserPlugin): OwnerPluginView {
  return { ...toPublicView(plugin), rejection_reason: plugin.rejectionReason, user_id: plugin.userId };
}

export function toAdminView(plugin: UserPlugin): AdminPluginView {
  return {
    ...toOwnerView(plugin),
    reviewed_by_user_id: plugin.reviewedByUserId,
    reviewed_at: plugin.reviewedAt?.toISOString() ?? null,
    execution_timeout: plugin.executionTimeout,
    file_missing: plugin.fileMissingAt != null,
    file_altered: plugin.fileAlteredAt != null,
    pending_version: plugin.pendingVersion,
    recheck_findings:
      plugin.recheck?.findings.map(({ rule, message, line, column }) => ({ rule, message, line, column })) ??
      null,
    recheck_rules_version: plugin.recheck?.rulesVersion ?? null,
  };
}
