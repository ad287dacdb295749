import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import type { AuthUser } from '../common/decorators';
import type { CataloguePage } from './dto/plugin.dto';
import { ListQuery, PageQuery } from './list-query';
import { findPluginOr404, pluginNotFound } from './plugin-lookup';
import { PluginsRepository } from './plugins.repository';
import type { UserPlugin } from './user-plugin.entity';

export type { CataloguePage };

/** What users read: the approved catalogue, one plugin, their own uploads. */
@Injectable()
export class PluginCatalogueService {
  constructor(private readonly plugins: PluginsRepository) {}

  async list(caller: AuthUser, listQuery: ListQuery): Promise<CataloguePage> {
    const { status, limit, offset } = listQuery;
    if (status !== 'approved' && !caller.isAdmin)
      throw new ApiError(HttpStatus.FORBIDDEN, 'Admin privileges required');

    const { total, plugins } = await this.plugins.catalogue({ ...listQuery, includeAltered: caller.isAdmin });
    return { total, limit, offset, plugins };
  }

  /**
   * A plugin that is not approved, or whose approved file was altered on disk, exists only for
   * its uploader and for admins.
   */
  async findVisible(caller: AuthUser, id: number | null): Promise<UserPlugin> {
    const plugin = await findPluginOr404(this.plugins, id);
    const served = plugin.status === 'approved' && plugin.fileAlteredAt === null;
    if (!served && !caller.isAdmin && plugin.userId !== caller.id) throw pluginNotFound();
    return plugin;
  }

  /** The caller's uploads, a page at a time, in the catalogue's page shape. */
  async mine(caller: AuthUser, { limit, offset }: PageQuery): Promise<CataloguePage> {
    const { total, plugins } = await this.plugins.uploadedBy(caller.id, { limit, offset });
    return { total, limit, offset, plugins };
  }
}
