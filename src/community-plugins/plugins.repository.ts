import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, EntityManager, In, IsNull, Not, Repository, SelectQueryBuilder } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { retryOnDeadlock } from '../database/deadlock';
import { containsPattern, LIKE_ESCAPE } from '../database/like';
import type { PluginGroup, PluginStatus, PluginType } from './plugin-constants';
import { storedTag, UserPlugin } from './user-plugin.entity';

/** The columns the admin view (the widest one) shows: never file_path. */
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
  'version',
  'tags',
  'sha256',
  'fileMissingAt',
  'createdAt',
  'updatedAt',
] as const satisfies ReadonlyArray<keyof UserPlugin>;

/** Column types both drivers hand over as JavaScript strings and numbers already. */
const PLAIN_COLUMN_TYPES = new Set(['varchar', 'text', 'int']);

export interface CatalogueFilter {
  status: PluginStatus;
  group?: PluginGroup;
  type?: PluginType;
  /** Found in the name or the description, case aside. */
  q?: string;
  /** One of its tags. */
  tag?: string;
  limit: number;
  offset: number;
}

/** Every query on `user_plugins`. */
@Injectable()
export class PluginsRepository {
  constructor(@InjectRepository(UserPlugin) private readonly plugins: Repository<UserPlugin>) {}

  findById(id: number): Promise<UserPlugin | null> {
    return this.plugins.findOneBy({ id });
  }

  async catalogue(filter: CatalogueFilter): Promise<{ total: number; plugins: UserPlugin[] }> {
    const query = this.plugins.createQueryBuilder('plugin').where({ status: filter.status });
    if (filter.group) query.andWhere({ group: filter.group });
    if (filter.type) query.andWhere({ type: filter.type });
    if (filter.q) {
      const pattern = containsPattern(filter.q.toLowerCase());
      query.andWhere(
        new Brackets((match) =>
          match
            .where(`LOWER(plugin.name) LIKE :pattern ESCAPE '${LIKE_ESCAPE}'`, { pattern })
            .orWhere(`LOWER(plugin.description) LIKE :pattern ESCAPE '${LIKE_ESCAPE}'`, { pattern }),
        ),
      );
    }
    if (filter.tag) {
      query.andWhere(`plugin.tags LIKE :tagPattern ESCAPE '${LIKE_ESCAPE}'`, {
        tagPattern: containsPattern(storedTag(filter.tag)),
      });
    }
    return this.page(query, filter);
  }

  /** A page of the query's rows, newest first, with the count over all pages. */
  private async page(
    query: SelectQueryBuilder<UserPlugin>,
    { limit, offset }: { limit: number; offset: number },
  ): Promise<{ total: number; plugins: UserPlugin[] }> {
    // No join: a row is a plugin, so COUNT(1), not getCount()'s COUNT(DISTINCT id) and its sort.
    const counted = await query.clone().select('COUNT(1)', 'cnt').getRawOne<{ cnt: number | string }>();
    const total = Number(counted?.cnt ?? 0);
    const rows = await query
      .select(LISTED_COLUMNS.map((property) => `plugin.${property}`))
      .orderBy('plugin.createdAt', 'DESC')
      .addOrderBy('plugin.id', 'DESC')
      .offset(offset)
      .limit(limit)
      .getRawMany<Record<string, unknown>>();
    return { total, plugins: rows.map((row) => this.fromRow(row)) };
  }

  /** The listed columns' metadata, found once: TypeORM searches a list on every lookup. */
  private listedColumns?: ReadonlyArray<{
    property: string;
    alias: string;
    column: ColumnMetadata;
    plain: boolean;
  }>;

  /**
   * Listing rows skip TypeORM's entity hydration, the largest cost of a catalogue page. Text and
   * integer columns come from both drivers as stored; every other value (dates) goes through
   * the driver's own conversion, so it comes out the same on SQLite and MySQL. Only the columns
   * of the widest view are read (never file_path).
   */
  private fromRow(row: Record<string, unknown>): UserPlugin {
    const driver = this.plugins.manager.connection.driver;
    this.listedColumns ??= LISTED_COLUMNS.map((property) => {
      const column = this.plugins.metadata.findColumnWithPropertyName(property)!;
      const plain = PLAIN_COLUMN_TYPES.has(String(column.type)) && !column.transformer;
      return { property, alias: `plugin_${column.databaseName}`, column, plain };
    });
    const plugin = new UserPlugin();
    const fields = plugin as unknown as Record<string, unknown>;
    for (const { property, alias, column, plain } of this.listedColumns) {
      const value = row[alias];
      fields[property] = value === null || plain ? value : driver.prepareHydratedValue(value, column);
    }
    return plugin;
  }

  /** A page of one user's uploads in any status, newest first. */
  uploadedBy(
    userId: number,
    page: { limit: number; offset: number },
  ): Promise<{ total: number; plugins: UserPlugin[] }> {
    return this.page(this.plugins.createQueryBuilder('plugin').where({ userId }), page);
  }

  /** Names compare without case on every database, as the unique index does. */
  nameTaken(name: string): Promise<boolean> {
    return this.plugins
      .createQueryBuilder('plugin')
      .where('LOWER(plugin.name) = LOWER(:name)', { name })
      .getExists();
  }

  countPending(userId: number, manager: EntityManager = this.plugins.manager): Promise<number> {
    return manager.countBy(UserPlugin, { userId, status: 'pending' });
  }

  /** Builds the entity (defaults applied) for insert(). */
  create(values: Omit<UserPlugin, 'id'>): UserPlugin {
    return this.plugins.create(values);
  }

  /** Inserts and fills in the id; a name taken meanwhile fails with a duplicate-key error. */
  async insert(manager: EntityManager, plugin: UserPlugin): Promise<void> {
    await manager.insert(UserPlugin, plugin);
  }

  async delete(id: number): Promise<boolean> {
    const deleted = await retryOnDeadlock(() => this.plugins.delete({ id }));
    return Boolean(deleted.affected);
  }

  /** What the reconciler compares with the plugin directory: every row's file. */
  files(): Promise<Array<Pick<UserPlugin, 'id' | 'name' | 'filePath' | 'fileMissingAt'>>> {
    return this.plugins.find({ select: { id: true, name: true, filePath: true, fileMissingAt: true } });
  }

  hasRowForFile(filePath: string): Promise<boolean> {
    return this.plugins.existsBy({ filePath });
  }

  /** Marks (a Date) or clears (null) a missing file; false when the row is gone or already so. */
  async setFileMissing(id: number, at: Date | null): Promise<boolean> {
    const updated = await retryOnDeadlock(() =>
      this.plugins.update(
        { id, fileMissingAt: at === null ? Not(IsNull()) : IsNull() },
        { fileMissingAt: at },
      ),
    );
    return Boolean(updated.affected);
  }

  /**
   * One conditional UPDATE, so two admins acting at once cannot both move the plugin out of
   * the same status: false for the one that found it moved already.
   */
  async updateIfStatusIn(
    id: number,
    from: PluginStatus[],
    values: Partial<UserPlugin>,
    options: { withFileOnly?: boolean } = {},
  ): Promise<boolean> {
    const where = { id, status: In(from), ...(options.withFileOnly ? { fileMissingAt: IsNull() } : {}) };
    const updated = await retryOnDeadlock(() => this.plugins.update(where, values));
    return Boolean(updated.affected);
  }
}
