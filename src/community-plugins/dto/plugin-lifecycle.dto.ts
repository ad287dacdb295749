import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { TextArg } from '../../common/args';
import { PLUGIN_FILE_PART, PLUGIN_STATUSES, VERSION_MAX_LENGTH } from '../shared/plugin-constants';
import { CHANGELOG_MAX_LENGTH } from '../shared/plugin-metadata';
import { TestRunSummary } from '../../plugin-test-runs/dto/test-run.dto';

/** The multipart form of a new version; the plugin's name and metadata stay as they are. */
export class UploadVersionArgs {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The Python source, as for an upload' })
  [PLUGIN_FILE_PART]?: never;

  @ApiProperty({
    type: String,
    maxLength: VERSION_MAX_LENGTH,
    example: '1.1.0',
    description: 'Greater than every earlier version of the plugin, in semantic-version order',
  })
  @Allow()
  version?: unknown;

  @ApiPropertyOptional({ type: String, maxLength: CHANGELOG_MAX_LENGTH, description: 'What changed' })
  @Allow()
  changelog?: unknown;
}

export class VersionApprovalView {
  @ApiProperty({ type: 'integer', description: 'The approving admin' })
  user_id!: number;

  @ApiProperty({ format: 'date-time' })
  at!: string;
}

/** One version; the uploader and admins see every version and the rejection reasons, admins also the reviews. */
export class PluginVersionView {
  @ApiProperty()
  version!: string;

  @ApiProperty({ enum: [...PLUGIN_STATUSES] })
  status!: string;

  @ApiProperty({ type: String, nullable: true, description: 'Hex SHA-256 of the version file' })
  sha256!: string | null;

  @ApiProperty({ type: String, nullable: true })
  changelog!: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Uploader and admins' })
  rejection_reason?: string | null;

  @ApiPropertyOptional({ type: 'integer', description: 'Admins: the uploader of this version' })
  user_id?: number;

  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'Admins' })
  reviewed_by_user_id?: number | null;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'Admins' })
  reviewed_at?: string | null;

  @ApiPropertyOptional({ type: [VersionApprovalView], description: 'Admins: each approval so far' })
  approvals?: VersionApprovalView[];

  @ApiPropertyOptional({
    type: () => [FindingView],
    nullable: true,
    description:
      'Uploader and admins: what the validator warns about in this version, which it accepted (`unbound-name`: ' +
      'a name the code reads and never binds raises NameError there), as its upload or the last re-check of the ' +
      'rules found it; empty when none, null for a version uploaded before warnings were kept',
  })
  warnings?: FindingView[] | null;
}

export class VersionList {
  @ApiProperty({ type: 'integer' })
  plugin_id!: number;

  @ApiProperty({ type: [PluginVersionView], description: 'Newest first' })
  versions!: PluginVersionView[];
}

export class FindingView {
  @ApiProperty()
  rule!: string;

  @ApiProperty()
  message!: string;

  @ApiProperty({ type: 'integer' })
  line!: number;

  @ApiProperty({ type: 'integer' })
  column!: number;
}

export class VersionDiff {
  @ApiProperty({ type: 'integer' })
  plugin_id!: number;

  @ApiProperty()
  version!: string;

  @ApiProperty({ type: String, nullable: true })
  sha256!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The latest version approved before it; null for a first version',
  })
  base_version!: string | null;

  @ApiProperty({ type: String, nullable: true })
  base_sha256!: string | null;

  @ApiProperty({ description: 'Unified diff (3 lines of context); empty when the sources are equal' })
  diff!: string;

  @ApiProperty({
    description:
      'True when the diff is not a shortest one: a stretch too costly to compare line by line is shown ' +
      'as all removed, then all added (the diff is still correct)',
  })
  approximate!: boolean;

  @ApiProperty({
    type: [FindingView],
    description: 'Validator findings of this version that the base version does not have',
  })
  new_findings!: FindingView[];

  @ApiProperty({
    type: [FindingView],
    nullable: true,
    description:
      "The validator's warnings on this version, kept with it (see the versions list's `warnings`); null for a " +
      'version uploaded before warnings were kept',
  })
  warnings!: FindingView[] | null;

  // Inline, not a $ref: a nullable $ref is not nullable in OpenAPI 3.0.
  @ApiProperty({
    type: 'object',
    nullable: true,
    required: ['id', 'status', 'flagged_events'],
    properties: {
      id: { type: 'integer' },
      status: { type: 'string', enum: ['queued', 'running', 'done', 'timed-out', 'failed'] },
      flagged_events: {
        type: 'integer',
        description: 'Events of its report flagged for the reviewer (0 until it ends)',
      },
    },
    description:
      'The newest test-run of this version, if any (its report: `GET .../test-run/`): the first of `test_runs`',
  })
  test_run!: { id: number; status: string; flagged_events: number } | null;

  @ApiProperty({
    type: [TestRunSummary],
    description:
      "Each reviewer's newest test-run of this version, newest first (a run of one reviewer never hides " +
      "another's; reports: `GET .../test-runs/<id>`)",
  })
  test_runs!: TestRunSummary[];
}

export class ManifestEntry {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  version!: string;

  @ApiProperty({ description: 'Hex SHA-256 of the approved file: a loader finds the file by it' })
  sha256!: string;
}

export class PluginManifest {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      "The audit log's entry count when the entries were read: never lower on a later fetch, higher after any " +
      'decision that changed them (a revocation among them). A loader refuses a serial lower than the last it loaded.',
  })
  serial!: number;

  @ApiProperty({ format: 'date-time', description: 'When this manifest was signed (UTC)' })
  issued_at!: string;

  @ApiProperty({
    format: 'date-time',
    description: 'The same instant as issued_at, under the name earlier loaders read',
  })
  generated_at!: string;

  @ApiProperty({
    format: 'date-time',
    description: 'issued_at plus PLUGIN_MANIFEST_TTL_SECONDS (UTC): a loader refuses the manifest after it',
  })
  expires_at!: string;

  @ApiProperty({
    type: [ManifestEntry],
    description: 'Approved plugins whose file is present and unaltered, by id',
  })
  plugins!: ManifestEntry[];

  @ApiProperty({
    description:
      'Base64 Ed25519 signature of the canonical JSON of every other member (keys sorted at every level, ' +
      'no spaces, non-ASCII as \\uXXXX: Python json.dumps(sort_keys=True, separators=(",", ":")))',
  })
  signature!: string;
}

export class ManifestKey {
  @ApiProperty({ enum: ['Ed25519'] })
  algorithm!: 'Ed25519';

  @ApiProperty({ description: 'SubjectPublicKeyInfo PEM' })
  public_key_pem!: string;

  @ApiProperty({ description: 'Hex SHA-256 of the raw 32-byte public key, as the audit log names it' })
  fingerprint!: string;
}

/** The stars as text (a JSON number arrives as its text); the ratings service reads and checks them. */
export class RatingArgs {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 5 })
  @TextArg()
  stars?: string;
}
