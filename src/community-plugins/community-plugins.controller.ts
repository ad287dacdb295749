import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  Param,
  Post,
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
  UploadPluginArgs,
} from './dto/plugin.dto';
import { MultipartFields } from '../http/multipart-fields.guard';
import { REVIEW_FORM } from './review-form';
import {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  MAX_SEARCH_LENGTH,
  ParseListQueryPipe,
  ParsePageQueryPipe,
} from './list-query';
import type { ListQuery, PageQuery } from './list-query';
import { PluginCatalogueService } from './plugin-catalogue.service';
import {
  PLUGIN_FILE_PART,
  PLUGIN_GROUPS,
  PLUGIN_NOT_FOUND,
  PLUGIN_STATUSES,
  PLUGIN_TYPES,
  REJECTION_REASON_MAX_LENGTH,
  TAG_MAX_LENGTH,
} from './plugin-constants';
import { FILE_MISSING, PluginReviewService } from './plugin-review.service';
import {
  INVALID_METADATA,
  MALFORMED_BODY,
  ONE_FILE_ONLY,
  ONLY_PY_FILES,
  PluginUploadInterceptor,
} from './plugin-upload.interceptor';
import {
  DISK_FULL,
  PluginUploadService,
  STORAGE_UNAVAILABLE,
  TOO_MANY_PENDING,
  UploadedPluginFile,
  VALIDATOR_BUSY,
} from './plugin-upload.service';
import { UploadQuotaInterceptor } from './upload-quota.interceptor';
import { UserPlugin } from './user-plugin.entity';
import { PluginView } from './views/plugin-audience';
import { PluginViewInterceptor } from './views/plugin-view.interceptor';
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
 * from the route's audience and wraps the answer in the success envelope. The literal
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
    summary: 'The catalogue: approved plugins, newest first',
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
    description: 'Part of the name or description, any case',
  })
  @ApiQuery({
    name: 'tag',
    required: false,
    schema: { type: 'string', maxLength: TAG_MAX_LENGTH },
    description: 'Plugins that have this tag (any case)',
  })
  @ApiPageQuery()
  @Get()
  list(@CurrentUser() caller: AuthUser, @Query(ParseListQueryPipe) query: ListQuery): Promise<CataloguePage> {
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
    summary: 'The source of a plugin, read from its file (admins)',
    description:
      '409 when the file no longer matches the hash recorded at upload; 410 when it is missing (the plugin ' +
      'is then marked `file_missing` in the admin view).',
    data: PluginSource,
    fails: { ...NOT_FOUND, 409: ['Plugin file was modified on disk'], 410: [FILE_MISSING] },
  })
  @ApiPluginId()
  @Get(':id/source')
  source(@Param('id', ParseIdPipe) id: number | null): Promise<PluginSource> {
    return this.review.source(id);
  }

  @PluginView('reviewer', {
    summary: 'Approve a pending or rejected plugin (admins)',
    description: 'A plugin whose file is missing (`file_missing`) is not approved.',
    data: AdminPluginView,
    fails: { ...NOT_FOUND, 409: ['Plugin is already approved', FILE_MISSING] },
  })
  @ApiPluginId()
  @Post(':id/approve')
  approve(@CurrentUser() caller: AuthUser, @Param('id', ParseIdPipe) id: number | null): Promise<UserPlugin> {
    return this.review.approve(caller, id);
  }

  @PluginView('reviewer', {
    summary: 'Reject a pending or approved plugin, with a reason (admins)',
    data: AdminPluginView,
    fails: {
      400: [
        'Missing rejection reason',
        `Rejection reason must be at most ${REJECTION_REASON_MAX_LENGTH} characters`,
        'Rejection reason must not contain control characters',
        MALFORMED_BODY,
      ],
      ...NOT_FOUND,
      409: ['Plugin is already rejected'],
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
    return this.review.reject(caller, id, args.reason);
  }

  @AdminRoute({
    summary: 'Delete a plugin and its file (admins)',
    data: null,
    fails: NOT_FOUND,
  })
  @ApiPluginId()
  @Delete(':id/delete')
  remove(@Param('id', ParseIdPipe) id: number | null): Promise<null> {
    return this.review.remove(id);
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
