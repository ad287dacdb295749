import { Controller, Delete, Get, HttpCode, Param, Post, Req, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest as Request } from 'fastify';
import { AdminOnly, CurrentUser } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { ApiDataEndpoint, ApiQueryFilters, ApiRequestArguments } from '../openapi/api-docs';
import { MultipartFields } from '../http/multipart-fields.interceptor';
import { readText, REVIEW_FORM } from './review-form';
import { CataloguePage, PluginCatalogueService } from './plugin-catalogue.service';
import { PLUGIN_FILE_PART, PLUGIN_NOT_FOUND, REJECTION_REASON_MAX_LENGTH } from './plugin-constants';
import { PluginReviewService, PluginSource, ReviewHistory } from './plugin-review.service';
import {
  ADMIN_PLUGIN,
  CATALOGUE_FILTERS,
  CATALOGUE_PAGE,
  CURRENT_USER,
  OWNER_PLUGIN,
  PLUGIN_ID,
  PLUGIN_SOURCE,
  PUBLIC_PLUGIN,
  REJECTION,
  REVIEW_HISTORY,
  UPLOAD_FORM,
} from './plugin-schemas';
import {
  INVALID_METADATA,
  MALFORMED_BODY,
  ONE_FILE_ONLY,
  ONLY_PY_FILES,
  PluginUploadInterceptor,
  type UploadRequest,
} from './plugin-upload.interceptor';
import { PluginUploadService, TOO_MANY_PENDING, VALIDATOR_BUSY } from './plugin-upload.service';
import { UploadQuotaInterceptor } from './upload-quota.interceptor';
import { UserPlugin } from './user-plugin.entity';
import { ForAudience } from './views/plugin-audience';
import { PluginViewInterceptor } from './views/plugin-view.interceptor';

export interface CurrentUserView {
  id: number;
  name: string;
  email: string;
  is_admin: boolean;
}

const ApiPluginId = () => ApiParam({ name: 'id', schema: PLUGIN_ID });
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

  @ApiDataEndpoint({
    summary: 'Upload a plugin; it waits for review as `pending`',
    description:
      "Before the body is read: the uploader's attempts per hour (429 with `Retry-After`) and plugins " +
      'waiting for review (409). Then, in this order: the `.py` extension, the size, the metadata ' +
      '(`errors` names each field), the unique name, then the static validator (`errors` lists each ' +
      'violation with rule, message, line and column; 503 with `Retry-After` when it has no room for the ' +
      'upload now). A refused upload leaves neither a row nor a file.',
    access: 'user',
    status: 201,
    data: OWNER_PLUGIN,
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
      503: [VALIDATOR_BUSY],
    },
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: UPLOAD_FORM })
  @Post('upload')
  @ForAudience('uploader')
  @MultipartFields('own')
  @UseInterceptors(UploadQuotaInterceptor, PluginUploadInterceptor)
  upload(@CurrentUser() caller: AuthUser, @Req() request: UploadRequest): Promise<UserPlugin> {
    const file = request.file;
    return this.uploads.upload(caller, file, request.body as Record<string, unknown> | undefined);
  }

  @ApiDataEndpoint({
    summary: 'The catalogue: approved plugins, newest first',
    description:
      '400 with `errors` naming each malformed or repeated parameter; 403 when someone who is not an ' +
      'admin asks for `status=pending` or `status=rejected`.',
    access: 'user',
    data: CATALOGUE_PAGE,
    fails: { 400: ['Invalid query parameters'], 403: ['Admin privileges required'] },
  })
  @ApiQueryFilters(CATALOGUE_FILTERS)
  @Get()
  @ForAudience('catalogue')
  list(@CurrentUser() caller: AuthUser, @Req() request: Request): Promise<CataloguePage> {
    return this.catalogue.list(caller, request.query as Record<string, unknown>);
  }

  @ApiDataEndpoint({ summary: 'The caller', access: 'user', data: CURRENT_USER })
  @Get('me')
  me(@CurrentUser() caller: AuthUser): CurrentUserView {
    return { id: caller.id, name: caller.name, email: caller.email, is_admin: caller.isAdmin };
  }

  @ApiDataEndpoint({
    summary: "The caller's uploads in any status, newest first, with rejection reasons",
    access: 'user',
    data: { type: 'array', items: OWNER_PLUGIN },
  })
  @Get('mine')
  @ForAudience('uploader')
  mine(@CurrentUser() caller: AuthUser): Promise<UserPlugin[]> {
    return this.catalogue.mine(caller);
  }

  @ApiDataEndpoint({
    summary: 'One plugin',
    description:
      'Admin view for admins, owner view for its uploader, public view for others. A plugin that is not ' +
      'approved is not found except by its uploader and admins.',
    access: 'user',
    data: { oneOf: [PUBLIC_PLUGIN, OWNER_PLUGIN, ADMIN_PLUGIN] },
    fails: NOT_FOUND,
  })
  @ApiPluginId()
  @Get(':id')
  @ForAudience('detail')
  detail(@CurrentUser() caller: AuthUser, @Param('id') id: string): Promise<UserPlugin> {
    return this.catalogue.findVisible(caller, id);
  }

  @ApiDataEndpoint({
    summary: 'The source of a plugin, read from its file (admins)',
    description: '409 when the file is missing or its hash no longer matches the one recorded at upload.',
    access: 'admin',
    data: PLUGIN_SOURCE,
    fails: { ...NOT_FOUND, 409: ['Plugin file was modified on disk'] },
  })
  @ApiPluginId()
  @Get(':id/source')
  @AdminOnly()
  source(@Param('id') id: string): Promise<PluginSource> {
    return this.review.source(id);
  }

  @ApiDataEndpoint({
    summary: 'Approve a pending or rejected plugin (admins)',
    access: 'admin',
    data: ADMIN_PLUGIN,
    fails: { ...NOT_FOUND, 409: ['Plugin is already approved'] },
  })
  @ApiPluginId()
  @Post(':id/approve')
  @HttpCode(200)
  @AdminOnly()
  @ForAudience('reviewer')
  approve(@CurrentUser() caller: AuthUser, @Param('id') id: string): Promise<UserPlugin> {
    return this.review.approve(caller, id);
  }

  @ApiDataEndpoint({
    summary: 'Reject a pending or approved plugin, with a reason (admins)',
    access: 'admin',
    data: ADMIN_PLUGIN,
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
  })
  @ApiPluginId()
  @ApiRequestArguments(REJECTION)
  @Post(':id/reject')
  @HttpCode(200)
  @AdminOnly()
  @ForAudience('reviewer')
  @MultipartFields(REVIEW_FORM)
  reject(
    @CurrentUser() caller: AuthUser,
    @Param('id') id: string,
    @Req() request: Request,
  ): Promise<UserPlugin> {
    return this.review.reject(caller, id, readText(request, 'reason'));
  }

  @ApiDataEndpoint({
    summary: 'Delete a plugin and its file (admins)',
    access: 'admin',
    data: null,
    fails: NOT_FOUND,
  })
  @ApiPluginId()
  @Delete(':id/delete')
  @AdminOnly()
  remove(@Param('id') id: string): Promise<null> {
    return this.review.remove(id);
  }

  @ApiDataEndpoint({
    summary: 'Upload and review timeline of a plugin (admins)',
    access: 'admin',
    data: REVIEW_HISTORY,
    fails: NOT_FOUND,
  })
  @ApiPluginId()
  @Get(':id/review-history')
  @AdminOnly()
  history(@Param('id') id: string): Promise<ReviewHistory> {
    return this.review.history(id);
  }
}
