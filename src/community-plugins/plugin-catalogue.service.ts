import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import type { AuthUser } from '../common/decorators';
import { parseListQuery } from './list-query';
import { findPluginOr404, pluginNotFound } from './plugin-lookup';
import { PluginsRepository } from './plugins.repository';
import type { UserPlugin } from './user-plugin.entity';

export interface CataloguePage {
  total: number;
  limit: number;
  offset: number;
  plugins: UserPlugin[];
}

/** What users read: the approved catalogue, one plugin, their own uploads. */
@Injectable()
export class PluginCatalogueService {
  constructor(private readonly plugins: PluginsRepository) {}

  async list(caller: AuthUser, rawQuery: Record<string, unknown>): Promise<CataloguePage> {
    const parsed = parseListQuery(rawQuery);
    if (!parsed.ok) throw new ApiError(HttpStatus.BAD_REQUEST, 'Invalid query parameters', parsed.errors);
    const { status, group, type, q, limit, offset } = parsed.query;
    if (status !== 'approved' && !caller.isAdmin)
      throw new ApiError(HttpStatus.FORBIDDEN, 'Admin privileges required');

    const { total, plugins } = await this.plugins.catalogue({ status, group, type, q, limit, offset });
    return { total, limit, offset, plugins };
  }

  /** A plugin that is not approved exists only for its uploader and for admins. */
  async findVisible(caller: AuthUser, rawId: string): Promise<UserPlugin> {
    const plugin = await findPluginOr404(this.plugins, rawId);
    if (plugin.status !== 'approved' && !caller.isAdmin && plugin.userId !== caller.id)
      throw pluginNotFound();
    return plugin;
  }

  mine(caller: AuthUser): Promise<UserPlugin[]> {
    return this.plugins.uploadedBy(caller.id);
  }
}
