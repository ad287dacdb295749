import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Allow, Matches, MaxLength } from 'class-validator';
import { StringArg, TextArg } from '../../common/args';
import {
  AUTHOR_LENGTH,
  DEFAULT_VERSION,
  DESCRIPTION_LENGTH,
  EXECUTION_TIMEOUT,
  MAX_TAGS,
  NAME_LENGTH,
  PLUGIN_FILE_PART,
  PLUGIN_GROUPS,
  PLUGIN_STATUSES,
  PLUGIN_TYPES,
  PluginStatus,
  REJECTION_REASON_MAX_LENGTH,
  TAG_MAX_LENGTH,
  VERSION_MAX_LENGTH,
} from '../shared/plugin-constants';
import type { UserPlugin } from '../shared/user-plugin.entity';
import { AdminPluginView, OwnerPluginView, PublicPluginView } from '../views/plugin-views';

/** A catalogue page. The service returns rows; PluginViewInterceptor shows each in its view. */
@ApiExtraModels(PublicPluginView, AdminPluginView)
export class CataloguePage {
  @ApiProperty({ type: 'integer', description: 'Plugins that match, over all pages' })
  total!: number;

  @ApiProperty({ type: 'integer', description: 'The limit that applied' })
  limit!: number;

  @ApiProperty({ type: 'integer' })
  offset!: number;

  @ApiProperty({
    description: 'Newest first; admin view for admins, public view for everyone else',
    type: 'array',
    items: { oneOf: [{ $ref: getSchemaPath(PublicPluginView) }, { $ref: getSchemaPath(AdminPluginView) }] },
  })
  plugins!: UserPlugin[];
}

/** A page of the caller's own uploads: the catalogue's page shape, each plugin in the owner view. */
@ApiExtraModels(OwnerPluginView)
export class OwnPluginsPage {
  @ApiProperty({ type: 'integer', description: "The caller's plugins, over all pages" })
  total!: number;

  @ApiProperty({ type: 'integer', description: 'The limit that applied' })
  limit!: number;

  @ApiProperty({ type: 'integer' })
  offset!: number;

  @ApiProperty({
    description: 'Newest first, in any status, with rejection reasons',
    type: 'array',
    items: { $ref: getSchemaPath(OwnerPluginView) },
  })
  plugins!: UserPlugin[];
}

/** The source of a plugin, read from its file; never its path. */
export class PluginSource {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty()
  name!: string;

  @ApiProperty({
    description:
      'The version shown: by default the one approve would act on (the version waiting for review; for a ' +
      'rejected or revoked plugin, its own version; else the approved version served), or `?version=`',
  })
  version!: string;

  @ApiProperty({ description: "Of the file as read now: the version's recorded digest (else 409)" })
  sha256!: string;

  @ApiProperty()
  source_code!: string;
}

export class ReviewEvent {
  @ApiProperty({ enum: ['uploaded', ...PLUGIN_STATUSES.filter((status) => status !== 'pending')] })
  event!: 'uploaded' | PluginStatus;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  at!: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The uploader, or the reviewer' })
  user_id!: number | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Only on `rejected`' })
  reason?: string | null;
}

/** Built from the plugin row's own timestamps; not an append-only audit log. */
export class ReviewHistory {
  @ApiProperty({ type: 'integer' })
  plugin_id!: number;

  @ApiProperty({
    type: [ReviewEvent],
    description: 'The upload, then the latest review if there was one; built from the plugin row',
  })
  events!: ReviewEvent[];
}

/**
 * The multipart form of an upload; the text parts may come before or after the file.
 * PluginUploadInterceptor takes the file; the text parts stay as sent (`unknown`), because
 * the upload service checks them in the spec's order, after the extension and the size,
 * naming each bad field in `errors` (plugin-metadata.ts).
 */
export class UploadPluginArgs {
  @ApiProperty({
    type: 'string',
    format: 'binary',
    description:
      'The Python source: one file, its name ending in `.py`, at most PLUGIN_UPLOAD_MAX_SIZE bytes',
  })
  [PLUGIN_FILE_PART]?: never;

  @ApiProperty({
    type: String,
    minLength: NAME_LENGTH.min,
    maxLength: NAME_LENGTH.max,
    description: 'Unique among plugins, any case',
  })
  @Allow()
  name?: unknown;

  @ApiProperty({ type: String, minLength: DESCRIPTION_LENGTH.min, maxLength: DESCRIPTION_LENGTH.max })
  @Allow()
  description?: unknown;

  @ApiProperty({ type: String, enum: [...PLUGIN_GROUPS] })
  @Allow()
  group?: unknown;

  @ApiProperty({ type: String, enum: [...PLUGIN_TYPES] })
  @Allow()
  type?: unknown;

  @ApiProperty({ type: String, minLength: AUTHOR_LENGTH.min, maxLength: AUTHOR_LENGTH.max })
  @Allow()
  author?: unknown;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: EXECUTION_TIMEOUT.min,
    maximum: EXECUTION_TIMEOUT.max,
    default: EXECUTION_TIMEOUT.default,
    description: 'Seconds',
  })
  @Allow()
  execution_timeout?: unknown;

  @ApiPropertyOptional({
    type: String,
    maxLength: VERSION_MAX_LENGTH,
    default: DEFAULT_VERSION,
    example: '1.2.0',
    description: 'A short version string such as `1.0.0`, `2.1` or `1.0.0-beta.2`',
  })
  @Allow()
  version?: unknown;

  @ApiPropertyOptional({
    type: String,
    example: 'xss,headers',
    description:
      `Up to ${MAX_TAGS} tags, comma-separated in one part or one part each (repeated \`tags\`); each 1 to ` +
      `${TAG_MAX_LENGTH} letters, digits, \`.\`, \`_\`, \`+\` or \`-\`, stored in lower case without repeats`,
  })
  @Allow()
  tags?: unknown;
}

/**
 * The version a decision is meant for. When given and not the version the decision would act
 * on, the answer is 409 naming that version.
 */
export class ReviewVersionArgs {
  @ApiPropertyOptional({ maxLength: VERSION_MAX_LENGTH, description: 'The version decided on' })
  @TextArg()
  @MaxLength(VERSION_MAX_LENGTH, { message: `must be at most ${VERSION_MAX_LENGTH} characters` })
  version?: string;

  @ApiPropertyOptional({ pattern: '^[0-9a-f]{64}$', description: 'The sha256 of the version decided on' })
  @TextArg()
  @Matches(/^[0-9a-f]{64}$/, { message: 'must be 64 lower-case hexadecimal digits' })
  sha256?: string;
}

/** `?version=` of the source endpoint: any version of the plugin. */
export class SourceQuery {
  @ApiPropertyOptional({
    maxLength: VERSION_MAX_LENGTH,
    description: 'Any version of the plugin; by default the one approve would act on',
  })
  @TextArg()
  @MaxLength(VERSION_MAX_LENGTH, { message: `must be at most ${VERSION_MAX_LENGTH} characters` })
  version?: string;
}

/** The reason is checked by the review service once the plugin is known to exist. */
export class RejectArgs extends ReviewVersionArgs {
  @ApiProperty({
    minLength: 1,
    maxLength: REJECTION_REASON_MAX_LENGTH,
    description: 'Shown to the uploader; trimmed',
  })
  @StringArg()
  reason?: string;
}
