import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  Param,
  Post,
  Put,
  Query,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Args } from '../common/args';
import { AdminRoute, Authenticated, CurrentUser } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiIdParam, oneOf } from '../openapi/api-docs';
import {
  CataloguePage,
  CurrentUserView,
  OwnPluginsPage,
  PluginSource,
  RejectArgs,
  ReviewHistory,
  ReviewVersionArgs,
  SourceQuery,
  UploadPluginArgs,
} from './dto/plugin.dto';
import { MultipartFields } from '../http/multipart-fields.guard';
import { REVIEW_FORM } from './review/review-form';
import {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  MAX_SEARCH_LENGTH,
  ParseListQueryPipe,
  ParsePageQueryPipe,
} from './catalogue/list-query';
import type { ListQuery, PageQuery } from './catalogue/list-query';
import { PluginCatalogueService } from './catalogue/plugin-catalogue.service';
import type { PublicCataloguePage } from './catalogue/plugin-catalogue.service';
import {
  PLUGIN_FILE_PART,
  PLUGIN_GROUPS,
  PLUGIN_NOT_FOUND,
  PLUGIN_STATUSES,
  PLUGIN_TYPES,
  REJECTION_REASON_MAX_LENGTH,
  TAG_MAX_LENGTH,
} from './shared/plugin-constants';
import {
  ALREADY_APPROVED_BY_YOU,
  FILE_MISSING,
  MODIFIED_ON_DISK,
  OTHER_VERSION_DECIDED,
  OTHER_VERSION_WAITING,
  PluginReviewService,
  READ_FIRST,
  SELF_REVIEW,
  VERSION_CHANGED,
  VERSION_NOT_FOUND,
} from './review/plugin-review.service';
import {
  ManifestKey,
  PluginManifest,
  RatingArgs,
  UploadVersionArgs,
  VersionDiff,
  VersionList,
} from './dto/plugin-lifecycle.dto';
import { PluginManifestService } from './manifest/plugin-manifest.service';
import { NOT_RATABLE, OWN_RATING, PluginRatingsService, STARS_INVALID } from './catalogue/plugin-ratings.service';
import { DIFF_BUSY, PluginVersionsService } from './review/plugin-versions.service';
import { OwnPluginInterceptor } from './upload/own-plugin.interceptor';
import { CATALOGUE_SORTS } from './shared/plugins.repository';
import {
  INVALID_METADATA,
  MALFORMED_BODY,
  ONE_FILE_ONLY,
  ONLY_PY_FILES,
  PluginUploadInterceptor,
  PluginVersionUploadInterceptor,
} from './upload/plugin-upload.interceptor';
import {
  DISK_FULL,
  PluginUploadService,
  STORAGE_UNAVAILABLE,
  TOO_MANY_PENDING,
  UploadedPluginFile,
  VALIDATOR_BUSY,
  VERSION_WAITING,
} from './upload/plugin-upload.service';
import { UploadQuotaInterceptor } from './upload/upload-quota.interceptor';
import { UserPlugin } from './shared/user-plugin.entity';
import { PluginView } from './views/plugin-audience';
import { PluginViewInterceptor, Shown } from './views/plugin-view.interceptor';
import { AdminPluginView, OwnerPluginView, PublicPluginView } from './views/plugin-views';

const ApiPluginId = () => ApiIdParam('id');

/** `limit` and `offset` of every plugin list. */
const ApiPageQuery = () =>
  applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, default: DEFAULT_LIMIT },
      description: `Above ${MAX_LIMIT} counts as ${MAX_LIMIT}`,
    }),
    ApiQuery({ name: 'offset', required: false, schema: { type: 'integer', minimum: 0, default: 0 } }),
  );
const NOT_FOUND = { 404: [PLUGIN_NOT_FOUND] };

/**
 * The marketplace. Handlers return entities; PluginViewInterceptor picks each plugin's view
 * from the route's audience and wraps the answer in the success envelope (the readers'
 * catalogue returns its views already built from the rows, as Shown). The literal
 * routes (`me`, `mine`) come before `:id` so they are never read as an id.
 */
@ApiTags('community-plugins')
@Controller('community-plugins')
@UseInterceptors(PluginViewInterceptor)
export class CommunityPluginsController {
  constructor(
    private readonly catalogue: PluginCatalogueService,
    private readonly review: PluginReviewService,
    private readonly uploads: PluginUploadService,
    private readonly versions: PluginVersionsService,
    private readonly ratings: PluginRatingsService,
    private readonly manifests: PluginManifestService,
  ) {}

  @PluginView('uploader', {
    summary: 'Upload a plugin; it waits for review as `pending`',
    description:
      "Before the body is read: the uploader's attempts per hour (429 with `Retry-After`) and plugins " +
      'waiting for review (409). Then, in this order: the `.py` extension, the size, the metadata ' +
      '(`errors` names each field), the unique name, then the static validator (`errors` lists each ' +
      'violation with rule, message, line and column; 503 with `Retry-After` when it has no room for the ' +
      'upload now). A refused upload leaves neither a row nor a file.',
    status: 201,
    data: OwnerPluginView,
    fails: {
      400: [
        ONLY_PY_FILES,
        ONE_FILE_ONLY,
        INVALID_METADATA,
        MALFORMED_BODY,
        `No ${PLUGIN_FILE_PART} provided`,
      ],
      409: ['Plugin name already exists', TOO_MANY_PENDING],
      413: ['Plugin file exceeds maximum size of <PLUGIN_UPLOAD_MAX_SIZE> bytes'],
      422: ['Plugin failed validation'],
      429: ['Too many requests'],
      503: [VALIDATOR_BUSY, `${STORAGE_UNAVAILABLE}: <cause>`],
      507: [DISK_FULL],
    },
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: UploadPluginArgs })
  @Post('upload')
  @MultipartFields('own')
  @UseInterceptors(UploadQuotaInterceptor, PluginUploadInterceptor)
  upload(
    @CurrentUser() caller: AuthUser,
    @UploadedFile() file: UploadedPluginFile | undefined,
    @Body() metadata: UploadPluginArgs,
  ): Promise<UserPlugin> {
    return this.uploads.upload(caller, file, { ...metadata });
  }

  @PluginView('catalogue', {
    summary: 'The catalogue: approved plugins, newest first (or by `sort`)',
    description:
      '400 with `errors` naming each malformed or repeated parameter; 403 when someone who is not an ' +
      'admin asks for `status=pending` or `status=rejected`.',
    data: CataloguePage,
    fails: { 400: ['Invalid query parameters'], 403: ['Admin privileges required'] },
  })
  @ApiQuery({
    name: 'status',
    required: false,
    enum: [...PLUGIN_STATUSES],
    description: '`pending` and `rejected` are for admins only; `approved` by default',
  })
  @ApiQuery({ name: 'group', required: false, enum: [...PLUGIN_GROUPS] })
  @ApiQuery({ name: 'type', required: false, enum: [...PLUGIN_TYPES] })
  @ApiQuery({
    name: 'q',
    required: false,
    schema: { type: 'string', maxLength: MAX_SEARCH_LENGTH },
    description: 'Part of the name, description or author, any case',
  })
  @ApiQuery({
    name: 'min_rating',
    required: false,
    schema: { type: 'number', minimum: 0, maximum: 5 },
    description: 'Mean rating (as shown, one decimal) at least this; up to one decimal',
  })
  @ApiQuery({ name: 'sort', required: false, enum: [...CATALOGUE_SORTS], description: '`newest` by default' })
  @ApiQuery({
    name: 'tag',
    required: false,
    schema: { type: 'string', maxLength: TAG_MAX_LENGTH },
    description: 'Plugins that have this tag (any case)',
  })
  @ApiPageQuery()
  @Get()
  list(
    @CurrentUser() caller: AuthUser,
    @Query(ParseListQueryPipe) query: ListQuery,
  ): Promise<CataloguePage | Shown<PublicCataloguePage>> {
    return this.catalogue.list(caller, query);
  }

  @Authenticated({ summary: 'The caller', data: CurrentUserView })
  @Get('me')
  me(@CurrentUser() caller: AuthUser): CurrentUserView {
    return { id: caller.id, name: caller.name, email: caller.email, is_admin: caller.isAdmin };
  }

  @PluginView('uploader', {
    summary: "The caller's uploads in any status, newest first, with rejection reasons",
    description:
      "A page in the catalogue's shape (`total`, `limit`, `offset`, `plugins`), so every plugin list " +
      'reads alike; 400 with `errors` naming a malformed `limit` or `offset`.',
    data: OwnPluginsPage,
    fails: { 400: ['Invalid query parameters'] },
  })
  @ApiPageQuery()
  @Get('mine')
  mine(@CurrentUser() caller: AuthUser, @Query(ParsePageQueryPipe) page: PageQuery): Promise<OwnPluginsPage> {
    return this.catalogue.mine(caller, page);
  }

  @PluginView('catalogue', {
    summary: 'The signed manifest: the approved catalogue as the framework loads it',
    description:
      'One entry per approved plugin whose file is present and has its approved digest; never a file path ' +
      '(a loader finds a file by its digest). `signature` signs every other member; the key is at `manifest/key/`. ' +
      'A loader refuses a manifest past `expires_at` or with a `serial` lower than the last it loaded (docs/plugin-manifest.md).',
    data: PluginManifest,
  })
  @Get('manifest')
  manifest(): Promise<PluginManifest> {
    return this.manifests.manifest();
  }

  @PluginView('catalogue', {
    summary: 'The public key that verifies the manifest',
    data: ManifestKey,
  })
  @Get('manifest/key')
  manifestKey(): ManifestKey {
    return this.manifests.key();
  }

  @PluginView('detail', {
    summary: 'One plugin',
    description:
      'Admin view for admins, owner view for its uploader, public view for others. A plugin that is not ' +
      'approved is not found except by its uploader and admins.',
    data: oneOf(PublicPluginView, OwnerPluginView, AdminPluginView),
    fails: NOT_FOUND,
  })
  @ApiPluginId()
  @Get(':id')
  detail(@CurrentUser() caller: AuthUser, @Param('id', ParseIdPipe) id: number | null): Promise<UserPlugin> {
    return this.catalogue.findVisible(caller, id);
  }

  @AdminRoute({
    summary: 'The source of the version approve would act on, or of `?version=`, read from its file (admins)',
    description:
      'By default the version waiting for review; for a rejected or revoked plugin its own version; else the ' +
      'approved version served. `version` and `sha256` name what is shown. Serving it records that this admin ' +
      'read those bytes (a body-less approve needs that). 409 when the file no longer matches the hash ' +
      'recorded at upload; 410 when it is missing (the plugin is then marked `file_missing` in the admin view).',
    data: PluginSource,
    fails: {
      400: ['Invalid request arguments'],
      404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND],
      409: [MODIFIED_ON_DISK],
      410: [FILE_MISSING],
    },
    query: SourceQuery,
  })
  @ApiPluginId()
  @Get(':id/source')
  source(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Args() query: SourceQuery,
  ): Promise<PluginSource> {
    return this.review.source(caller, id, query.version);
  }

  @PluginView('reviewer', {
    summary: 'Approve the version waiting for review, or reinstate a rejected or revoked plugin (admins)',
    description:
      'The body is optional (the spec sends none). Checks in this order: the plugin, a version to approve ' +
      '(a revoked plugin: the revoked version), the `version` and `sha256` given (if any) are that version, its ' +
      "file has its recorded digest, the approver's address does not reach the mailbox of the version's or the " +
      "plugin's uploader (`Alice+x@` is `alice@`; unless PLUGIN_SELF_REVIEW=allowed), the approver fetched those " +
      'bytes (`source/` or the diff) since the version was last rejected, and has not approved it yet. With ' +
      'PLUGIN_APPROVALS_REQUIRED above 1 the version stays pending until that many admins approved it; an ' +
      'approval counts while its admin is an admin in service.',
    data: AdminPluginView,
    fails: {
      400: ['Invalid request arguments'],
      ...NOT_FOUND,
      403: [SELF_REVIEW],
      409: [
        'Plugin is already approved',
        OTHER_VERSION_WAITING,
        OTHER_VERSION_DECIDED,
        FILE_MISSING,
        MODIFIED_ON_DISK,
        READ_FIRST,
        ALREADY_APPROVED_BY_YOU,
        VERSION_CHANGED,
      ],
    },
    args: ReviewVersionArgs,
  })
  @ApiPluginId()
  @Post(':id/approve')
  approve(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Args() args: ReviewVersionArgs,
  ): Promise<UserPlugin> {
    return this.review.approve(caller, id, { version: args.version, sha256: args.sha256 });
  }

  @PluginView('reviewer', {
    summary: 'Reject the version waiting for review, or revoke an approved plugin, with a reason (admins)',
    description:
      'The uploader is mailed the reason. An admin may not reject a version uploaded from their own mailbox ' +
      '(as for approve). `version` and `sha256` (optional) must name the version rejected (else 409). Every ' +
      'read of the rejected bytes ends: approving them again takes a new read.',
    data: AdminPluginView,
    fails: {
      403: [SELF_REVIEW],
      400: [
        'Missing rejection reason',
        `Rejection reason must be at most ${REJECTION_REASON_MAX_LENGTH} characters`,
        'Rejection reason must not contain control characters',
        MALFORMED_BODY,
        'Invalid request arguments',
      ],
      ...NOT_FOUND,
      409: ['Plugin is already rejected', OTHER_VERSION_WAITING, OTHER_VERSION_DECIDED, VERSION_CHANGED],
    },
    args: RejectArgs,
  })
  @ApiPluginId()
  @Post(':id/reject')
  @MultipartFields(REVIEW_FORM)
  reject(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Args() args: RejectArgs,
  ): Promise<UserPlugin> {
    return this.review.reject(caller, id, args.reason, { version: args.version, sha256: args.sha256 });
  }

  @AdminRoute({
    summary: 'Delete a plugin and its file (admins)',
    data: null,
    fails: NOT_FOUND,
  })
  @ApiPluginId()
  @Delete(':id/delete')
  remove(@CurrentUser() caller: AuthUser, @Param('id', ParseIdPipe) id: number | null): Promise<null> {
    return this.review.remove(caller, id);
  }

  @PluginView('uploader', {
    summary: 'Upload a new version of your plugin; it waits for review',
    description:
      "The plugin's uploader only (404 for anyone else, before the body is read). The upload's checks in the " +
      "upload's order: extension, size, the `version` field (`errors`), its order and the one waiting (409), the " +
      'validator (422). The approved version stays in the catalogue until this one is approved.',
    status: 201,
    data: OwnerPluginView,
    fails: {
      400: [
        ONLY_PY_FILES,
        ONE_FILE_ONLY,
        INVALID_METADATA,
        MALFORMED_BODY,
        `No ${PLUGIN_FILE_PART} provided`,
      ],
      ...NOT_FOUND,
      409: ['Version must be greater than <latest>', VERSION_WAITING],
      413: ['Plugin file exceeds maximum size of <PLUGIN_UPLOAD_MAX_SIZE> bytes'],
      422: ['Plugin failed validation'],
      429: ['Too many requests'],
      503: [VALIDATOR_BUSY, `${STORAGE_UNAVAILABLE}: <cause>`],
      507: [DISK_FULL],
    },
  })
  @ApiPluginId()
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: UploadVersionArgs })
  @Post(':id/versions')
  @MultipartFields('own')
  @UseInterceptors(OwnPluginInterceptor, PluginVersionUploadInterceptor)
  uploadVersion(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @UploadedFile() file: UploadedPluginFile | undefined,
    @Body() fields: UploadVersionArgs,
  ): Promise<UserPlugin> {
    return this.uploads.uploadVersion(caller, id, file, { ...fields });
  }

  @PluginView('detail', {
    summary: "A plugin's versions, newest first",
    description:
      'Every version for its uploader and admins (admins also see reviews and approvals); approved ones for others.',
    data: VersionList,
    fails: NOT_FOUND,
  })
  @ApiPluginId()
  @Get(':id/versions')
  listVersions(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
  ): Promise<VersionList> {
    return this.versions.list(caller, id);
  }

  @PluginView('reviewer', {
    summary: "A version's source as a unified diff against the latest approved version before it (admins)",
    description:
      'With the validator findings that are new in it. Both files are read through their digest check. Serving ' +
      'it records that this admin read the version (as `source/` does). Computed off the event loop, once per ' +
      'pair of digests; 503 with `Retry-After` when the diff threads have no room for it.',
    data: VersionDiff,
    fails: {
      404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND],
      409: [MODIFIED_ON_DISK],
      410: [FILE_MISSING],
      503: [VALIDATOR_BUSY, DIFF_BUSY],
    },
  })
  @ApiPluginId()
  @Get(':id/versions/:version/diff')
  diff(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Param('version') version: string,
  ): Promise<VersionDiff> {
    return this.versions.diff(caller, id, version);
  }

  @PluginView('detail', {
    summary: 'Rate an approved plugin from 1 to 5 stars; rating again replaces your rating',
    description: 'A plugin uploaded from your own mailbox (`Alice+x@` is `alice@`) cannot be rated.',
    data: oneOf(PublicPluginView, AdminPluginView),
    fails: { 400: [STARS_INVALID], 403: [OWN_RATING], ...NOT_FOUND, 409: [NOT_RATABLE] },
    args: RatingArgs,
  })
  @ApiPluginId()
  @Put(':id/rating')
  rate(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Args() args: RatingArgs,
  ): Promise<UserPlugin> {
    return this.ratings.rate(caller, id, args.stars);
  }

  @AdminRoute({
    summary: 'Upload and review timeline of a plugin (admins)',
    data: ReviewHistory,
    fails: NOT_FOUND,
  })
  @ApiPluginId()
  @Get(':id/review-history')
  history(@Param('id', ParseIdPipe) id: number | null): Promise<ReviewHistory> {
    return this.review.history(id);
  }
}
