import { Controller, Delete, Get, HttpCode, Param, Post, Req, UseInterceptors } from '@nestjs/common';
import type { Request } from 'express';
import { AdminOnly, CurrentUser } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { FormFieldsInterceptor, readText } from './form-fields.interceptor';
import { CataloguePage, PluginCatalogueService } from './plugin-catalogue.service';
import { PluginReviewService, PluginSource, ReviewHistory } from './plugin-review.service';
import { PluginUploadInterceptor } from './plugin-upload.interceptor';
import { PluginUploadService, UploadedPluginFile } from './plugin-upload.service';
import { UserPlugin } from './user-plugin.entity';
import { ForAudience } from './views/plugin-audience';
import { PluginViewInterceptor } from './views/plugin-view.interceptor';

export interface CurrentUserView {
  id: number;
  name: string;
  email: string;
  is_admin: boolean;
}

/**
 * The marketplace. Handlers return entities; PluginViewInterceptor picks each plugin's view
 * from the route's audience and wraps the answer in the success envelope. The literal
 * routes (`me`, `mine`) come before `:id` so they are never read as an id.
 */
@Controller('community-plugins')
@UseInterceptors(PluginViewInterceptor)
export class CommunityPluginsController {
  constructor(
    private readonly catalogue: PluginCatalogueService,
    private readonly review: PluginReviewService,
    private readonly uploads: PluginUploadService,
  ) {}

  @Post('upload')
  @ForAudience('uploader')
  @UseInterceptors(PluginUploadInterceptor)
  upload(@CurrentUser() caller: AuthUser, @Req() request: Request): Promise<UserPlugin> {
    const file = (request as Request & { file?: UploadedPluginFile }).file;
    return this.uploads.upload(caller, file, request.body as Record<string, unknown> | undefined);
  }

  @Get()
  @ForAudience('catalogue')
  list(@CurrentUser() caller: AuthUser, @Req() request: Request): Promise<CataloguePage> {
    return this.catalogue.list(caller, request.query as Record<string, unknown>);
  }

  @Get('me')
  me(@CurrentUser() caller: AuthUser): CurrentUserView {
    return { id: caller.id, name: caller.name, email: caller.email, is_admin: caller.isAdmin };
  }

  @Get('mine')
  @ForAudience('uploader')
  mine(@CurrentUser() caller: AuthUser): Promise<UserPlugin[]> {
    return this.catalogue.mine(caller);
  }

  @Get(':id')
  @ForAudience('detail')
  detail(@CurrentUser() caller: AuthUser, @Param('id') id: string): Promise<UserPlugin> {
    return this.catalogue.findVisible(caller, id);
  }

  @Get(':id/source')
  @AdminOnly()
  source(@Param('id') id: string): Promise<PluginSource> {
    return this.review.source(id);
  }

  @Post(':id/approve')
  @HttpCode(200)
  @AdminOnly()
  @ForAudience('reviewer')
  approve(@CurrentUser() caller: AuthUser, @Param('id') id: string): Promise<UserPlugin> {
    return this.review.approve(caller, id);
  }

  @Post(':id/reject')
  @HttpCode(200)
  @AdminOnly()
  @ForAudience('reviewer')
  @UseInterceptors(FormFieldsInterceptor)
  reject(
    @CurrentUser() caller: AuthUser,
    @Param('id') id: string,
    @Req() request: Request,
  ): Promise<UserPlugin> {
    return this.review.reject(caller, id, readText(request, 'reason'));
  }

  @Delete(':id/delete')
  @AdminOnly()
  remove(@Param('id') id: string): Promise<null> {
    return this.review.remove(id);
  }

  @Get(':id/review-history')
  @AdminOnly()
  history(@Param('id') id: string): Promise<ReviewHistory> {
    return this.review.history(id);
  }
}
