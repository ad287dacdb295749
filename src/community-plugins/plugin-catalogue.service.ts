import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import type { AuthUser } from '../common/decorators';
import { parseListQuery } from './list-query';
import { findPluginOr404, pluginNotFound } from './plugin-lookup';
import { UserPlugin } from './user-plugin.entity';

export interface CataloguePage {
  total: number;
  limit: number;
  offset: number;
  plugins: UserPlugin[];
}

/** What users read: the approved catalogue, one plugin, their own uploads. */
@Injectable()
export class PluginCatalogueService {
  constructor(@InjectRepository(UserPlugin) private readonly plugins: Repository<UserPlugin>) {}

  async list(caller: AuthUser, rawQuery: Record<string, unknown>): Promise<CataloguePage> {
    const parsed = parseListQuery(rawQuery);
    if (!parsed.ok) throw new ApiError(HttpStatus.BAD_REQUEST, 'Invalid query parameters', parsed.errors);
    const { status, group, type, q, limit, offset } = parsed.query;
    if (status !== 'approved' && !caller.isAdmin)
      throw new ApiError(HttpStatus.FORBIDDEN, 'Admin privileges required');

    const query = this.plugins.createQueryBuilder('plugin').where({ status });
    if (group) query.andWhere({ group });
    if (type) query.andWhere({ type });
    if (q) {
      const pattern = `%${q.toLowerCase().replace(/[!%_]/g, (character) => `!${character}`)}%`;
      query.andWhere(
        new Brackets((match) =>
          match
            .where("LOWER(plugin.name) LIKE :pattern ESCAPE '!'", { pattern })
            .orWhere("LOWER(plugin.description) LIKE :pattern ESCAPE '!'", { pattern }),
        ),
      );
    }
    const [plugins, total] = await query
      .orderBy('plugin.createdAt', 'DESC')
      .addOrderBy('plugin.id', 'DESC')
      .skip(offset)
      .take(limit)
      .getManyAndCount();
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
    return this.plugins.find({ where: { userId: caller.id }, order: { createdAt: 'DESC', id: 'DESC' } });
  }
}
