import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import type { AuthUser } from '../../common/decorators';
import type { CataloguePage } from '../dto/plugin.dto';
import { ListQuery, PageQuery } from './list-query';
import { findPluginOr404, pluginNotFound } from '../shared/plugin-lookup';
import { PluginsRepository } from '../shared/plugins.repository';
import { CatalogueRepository } from './catalogue.repository';
import type { UserPlugin } from '../shared/user-plugin.entity';
import { Shown } from '../views/plugin-view.interceptor';
import type { PublicPluginView } from '../views/plugin-views';

export type { CataloguePage };

/** A catalogue page as everyone but admins gets it: the same shape, plugins in the public view. */
export type PublicCataloguePage = Omit<CataloguePage, 'plugins'> & { plugins: PublicPluginView[] };

/** What users read: the approved catalogue, one plugin, their own uploads. */
@Injectable()
export class PluginCatalogueService {
  constructor(
    private readonly plugins: PluginsRepository,
    private readonly lists: CatalogueRepository,
  ) {}

  /**
   * Admins get entities, shown in the admin view with the re-check's verdicts; everyone else
   * gets the public view, built from the rows (the catalogue audience's choice, plugin-audience.ts).
   */
  async list(caller: AuthUser, listQuery: ListQuery): Promise<CataloguePage | Shown<PublicCataloguePage>> {
    const { status, limit, offset } = listQuery;
    if (status !== 'approved' && !caller.isAdmin)
      throw new ApiError(HttpStatus.FORBIDDEN, 'Admin privileges required');

    if (!caller.isAdmin) {
      const { total, plugins } = await this.lists.publicCatalogue({ ...listQuery, includeAltered: false });
      return new Shown({ total, limit, offset, plugins });
    }
    const { total, plugins } = await this.lists.catalogue({ ...listQuery, includeAltered: true });
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
    const { total, plugins } = await this.lists.uploadedBy(caller.id, { limit, offset });
    return { total, limit, offset, plugins };
  }
}
