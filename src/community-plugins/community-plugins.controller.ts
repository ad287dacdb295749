import {
  Body,
  Controller,
  Delete,
  Get,
  Param,
  Post,
  Put,
  Query,
  Req,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiTags } from '@nestjs/swagger';
import { Args } from '../common/args';
import { CurrentUser } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { MultipartFields } from '../http/multipart-fields.guard';
import { CATALOGUE_ROUTES } from './catalogue/catalogue.routes';
import { ParseListQueryPipe, ParsePageQueryPipe } from './catalogue/list-query';
import type { ListQuery, PageQuery } from './catalogue/list-query';
import { PluginCatalogueService } from './catalogue/plugin-catalogue.service';
import { CurrentUserView, currentUserView } from '../auth/current-user.view';
import type { PublicCataloguePage } from './catalogue/plugin-catalogue.service';
import { PluginRatingsService } from './catalogue/plugin-ratings.service';
import { RatingArgs, UploadVersionArgs, VersionDiff, VersionList } from './dto/plugin-lifecycle.dto';
import type { ManifestKey, PluginManifest } from './dto/plugin-lifecycle.dto';
import {
  CataloguePage,
  OwnPluginsPage,
  PluginSource,
  RejectArgs,
  ReviewHistory,
  ReviewVersionArgs,
  SourceQuery,
  UploadPluginArgs,
} from './dto/plugin.dto';
import { ManifestFilesService } from './manifest/manifest-files.service';
import { MANIFEST_ROUTES } from './manifest/manifest.routes';
import { PluginManifestService } from './manifest/plugin-manifest.service';
import { PluginReviewService } from './review/plugin-review.service';
import { PluginVersionsService } from './review/plugin-versions.service';
import { REVIEW_FORM } from './review/review-form';
import { REVIEW_ROUTES } from './review/review.routes';
import type { UserPlugin } from './shared/user-plugin.entity';
import { OwnPluginInterceptor } from './upload/own-plugin.interceptor';
import { PluginUploadInterceptor, PluginVersionUploadInterceptor } from './upload/plugin-upload.interceptor';
import { PluginUploadService } from './upload/plugin-upload.service';
import type { UploadedPluginFile } from './upload/upload-answers';
import { UploadQuotaInterceptor } from './upload/upload-quota.interceptor';
import { UPLOAD_ROUTES } from './upload/upload.routes';
import { PluginViewInterceptor, Shown } from './views/plugin-view.interceptor';

/**
 * The marketplace's routes, in the order the router and the OpenAPI document list them: each
 * maps a request to its concern's service. Access and documentation are each concern's
 * (`<concern>/<concern>.routes.ts`). Handlers return entities; PluginViewInterceptor picks
 * each plugin's view from the route's audience and wraps the answer in the success envelope
 * (the readers' catalogue returns its views already built from the rows, as Shown).
 * The literal routes (`me`, `mine`, `manifest`, `files`) come before `:id` so they are never read as an id.
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
    private readonly files: ManifestFilesService,
  ) {}

  @UPLOAD_ROUTES.upload()
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

  @CATALOGUE_ROUTES.list()
  @Get()
  list(
    @CurrentUser() caller: AuthUser,
    @Query(ParseListQueryPipe) query: ListQuery,
  ): Promise<CataloguePage | Shown<PublicCataloguePage>> {
    return this.catalogue.list(caller, query);
  }

  @CATALOGUE_ROUTES.me()
  @Get('me')
  me(@CurrentUser() caller: AuthUser): CurrentUserView {
    return currentUserView(caller);
  }

  @CATALOGUE_ROUTES.mine()
  @Get('mine')
  mine(@CurrentUser() caller: AuthUser, @Query(ParsePageQueryPipe) page: PageQuery): Promise<OwnPluginsPage> {
    return this.catalogue.mine(caller, page);
  }

  @MANIFEST_ROUTES.manifest()
  @Get('manifest')
  manifest(): Promise<PluginManifest> {
    return this.manifests.manifest();
  }

  @MANIFEST_ROUTES.key()
  @Get('manifest/key')
  manifestKey(): ManifestKey {
    return this.manifests.key();
  }

  @MANIFEST_ROUTES.file()
  @Get('files/:sha256')
  file(@Param('sha256') sha256: string, @Req() request: FastifyRequest): Promise<Response> {
    const header = (name: string) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    };
    return this.files.serve(sha256, {
      method: request.method,
      ifNoneMatch: header('if-none-match'),
      range: header('range'),
      ifRange: header('if-range'),
    });
  }

  @CATALOGUE_ROUTES.detail()
  @Get(':id')
  detail(@CurrentUser() caller: AuthUser, @Param('id', ParseIdPipe) id: number | null): Promise<UserPlugin> {
    return this.catalogue.findVisible(caller, id);
  }

  @REVIEW_ROUTES.source()
  @Get(':id/source')
  source(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Args() query: SourceQuery,
  ): Promise<PluginSource> {
    return this.review.source(caller, id, query.version);
  }

  @REVIEW_ROUTES.approve()
  @Post(':id/approve')
  approve(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Args() args: ReviewVersionArgs,
  ): Promise<UserPlugin> {
    return this.review.approve(caller, id, { version: args.version, sha256: args.sha256 });
  }

  @REVIEW_ROUTES.reject()
  @Post(':id/reject')
  @MultipartFields(REVIEW_FORM)
  reject(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Args() args: RejectArgs,
  ): Promise<UserPlugin> {
    return this.review.reject(caller, id, args.reason, { version: args.version, sha256: args.sha256 });
  }

  @REVIEW_ROUTES.remove()
  @Delete(':id/delete')
  remove(@CurrentUser() caller: AuthUser, @Param('id', ParseIdPipe) id: number | null): Promise<null> {
    return this.review.remove(caller, id);
  }

  @UPLOAD_ROUTES.version()
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

  @REVIEW_ROUTES.versions()
  @Get(':id/versions')
  listVersions(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
  ): Promise<VersionList> {
    return this.versions.list(caller, id);
  }

  @REVIEW_ROUTES.diff()
  @Get(':id/versions/:version/diff')
  diff(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Param('version') version: string,
  ): Promise<VersionDiff> {
    return this.versions.diff(caller, id, version);
  }

  @CATALOGUE_ROUTES.rate()
  @Put(':id/rating')
  rate(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Args() args: RatingArgs,
  ): Promise<UserPlugin> {
    return this.ratings.rate(caller, id, args.stars);
  }

  @REVIEW_ROUTES.history()
  @Get(':id/review-history')
  history(@Param('id', ParseIdPipe) id: number | null): Promise<ReviewHistory> {
    return this.review.history(id);
  }
}
