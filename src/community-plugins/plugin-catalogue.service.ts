import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import type { AuthUser } from '../common/decorators';
import type { CataloguePage } from './dto/plugin.dto';
import { ListQuery } from './list-query';
import { findPluginOr404, pluginNotFound } from './plugin-lookup';
import { UserPlugin } from './user-plugin.entity';

/** The columns the admin view (the widest one) shows. */
const LISTED_COLUMNS = [
  'id',
  'name',
  'description',
  'group',
  'type',
  'author',
  'status',
  'rejectionReason',
  'userId',
  'reviewedByUserId',
  'reviewedAt',
  'executionTimeout',
  'sha256',
  'createdAt',
  'updatedAt',
] as const satisfies ReadonlyArray<keyof UserPlugin>;

export type { CataloguePage };

/** What users read: the approved catalogue, one plugin, their own uploads. */
@Injectable()
export class PluginCatalogueService {
  constructor(@InjectRepository(UserPlugin) private readonly plugins: Repository<UserPlugin>) {}

  async list(caller: AuthUser, listQuery: ListQuery): Promise<CataloguePage> {
    const { status, group, type, q, limit, offset } = listQuery;
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
    const total = await query.getCount();
    const rows = await query
      .select(LISTED_COLUMNS.map((property) => `plugin.${property}`))
      .orderBy('plugin.createdAt', 'DESC')
      .addOrderBy('plugin.id', 'DESC')
      .offset(offset)
      .limit(limit)
      .getRawMany<Record<string, unknown>>();
    return { total, limit, offset, plugins: rows.map((row) => this.fromRow(row)) };
  }

  /**
   * Listing rows skip TypeORM's entity hydration, the largest cost of a catalogue page; each
   * value still goes through the driver's own conversion, so dates and booleans come out the
   * same on SQLite and MySQL. Only the columns of the widest view are read (never file_path).
   */
  private fromRow(row: Record<string, unknown>): UserPlugin {
    const metadata = this.plugins.metadata;
    const driver = this.plugins.manager.connection.driver;
    const plugin = new UserPlugin();
    for (const property of LISTED_COLUMNS) {
      const column = metadata.findColumnWithPropertyName(property)!;
      const value = row[`plugin_${column.databaseName}`];
      Object.assign(plugin, {
        [property]: value === null ? null : driver.prepareHydratedValue(value, column),
      });
    }
    return plugin;
  }

  /** A plugin that is not approved exists only for its uploader and for admins. */
  async findVisible(caller: AuthUser, id: number | null): Promise<UserPlugin> {
    const plugin = await findPluginOr404(this.plugins, id);
    if (plugin.status !== 'approved' && !caller.isAdmin && plugin.userId !== caller.id)
      throw pluginNotFound();
    return plugin;
  }

  mine(caller: AuthUser): Promise<UserPlugin[]> {
    return this.plugins.find({ where: { userId: caller.id }, order: { createdAt: 'DESC', id: 'DESC' } });
  }
}
