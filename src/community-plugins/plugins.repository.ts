import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, IsNull, Not, Repository } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { containsPattern, LIKE_ESCAPE } from '../database/like';
import { RULES_VERSION } from '../plugin-validator';
import { identityKey } from '../users/identity-key';
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
  'fileAlteredAt',
  'pendingVersion',
  'ratingTotal',
  'ratingsCount',
  'createdAt',
  'updatedAt',
] as const satisfies ReadonlyArray<keyof UserPlugin>;

/** Column types both drivers hand over as JavaScript strings and numbers already. */
const PLAIN_COLUMN_TYPES = new Set(['varchar', 'text', 'int']);

export const CATALOGUE_SORTS = ['newest', 'rating', 'name'] as const;
export type CatalogueSort = (typeof CATALOGUE_SORTS)[number];

const ORDER_BY: Record<CatalogueSort, string> = {
  newest: '`created_at` DESC, `id` DESC',
  // The mean without dividing by zero; more ratings first among equal means.
  rating:
    'CASE WHEN `ratings_count` = 0 THEN 0 ELSE `rating_total` * 1.0 / `ratings_count` END DESC, ' +
    '`ratings_count` DESC, `created_at` DESC, `id` DESC',
  name: 'LOWER(`name`) ASC, `id` ASC',
};

export interface CatalogueFilter {
  status: PluginStatus;
  group?: PluginGroup;
  type?: PluginType;
  /** Found in the name or the description, case aside. */
  q?: string;
  /** One of its tags. */
  tag?: string;
  /** Mean rating, as shown (one decimal), at least this. */
  minRating?: number;
  sort: CatalogueSort;
  /** Admins see approved plugins whose file was altered (marked); nobody else does. */
  includeAltered: boolean;
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

  /**
   * The catalogue's SQL written out rather than built: TypeORM's query builder took longer to
   * write these two statements than the database took to run them (`npm run bench:profile`).
   * Backticks quote names on SQLite and MySQL alike; every value is a bound parameter.
   */
  catalogue(filter: CatalogueFilter): Promise<{ total: number; plugins: UserPlugin[] }> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (filter.status === 'pending') {
      // The admin queue: new plugins, approved plugins with a version waiting, and approved
      // plugins whose served file the current validator rules flag (issue 18's re-check).
      conditions.push(
        "(`status` = 'pending' OR `pending_version` IS NOT NULL OR (`status` = 'approved' AND EXISTS (" +
          'SELECT 1 FROM `plugin_rechecks` r WHERE r.`plugin_id` = `user_plugins`.`id` AND r.`rules_version` = ? ' +
          "AND r.`sha256` = `user_plugins`.`sha256` AND r.`findings` <> '[]')))",
      );
      params.push(RULES_VERSION);
    } else {
      conditions.push('`status` = ?');
      params.push(filter.status);
    }
    if (filter.status === 'approved' && !filter.includeAltered) conditions.push('`file_altered_at` IS NULL');
    if (filter.group) {
      conditions.push('`group` = ?');
      params.push(filter.group);
    }
    if (filter.type) {
      conditions.push('`type` = ?');
      params.push(filter.type);
    }
    if (filter.q) {
      const pattern = containsPattern(filter.q.toLowerCase());
      conditions.push(
        `(LOWER(\`name\`) LIKE ? ESCAPE '${LIKE_ESCAPE}' OR LOWER(\`description\`) LIKE ? ESCAPE '${LIKE_ESCAPE}'` +
          ` OR LOWER(\`author\`) LIKE ? ESCAPE '${LIKE_ESCAPE}')`,
      );
      params.push(pattern, pattern, pattern);
    }
    if (filter.minRating !== undefined && filter.minRating > 0) {
      // The shown mean is rounded half up to tenths: it is at least m exactly when the mean is at
      // least m - 0.05, which in integers is 20 * total >= (20 * m - 1) * count.
      conditions.push('`ratings_count` > 0 AND 20 * `rating_total` >= ? * `ratings_count`');
      params.push(Math.round(filter.minRating * 10) * 2 - 1);
    }
    if (filter.tag) {
      conditions.push(`\`tags\` LIKE ? ESCAPE '${LIKE_ESCAPE}'`);
      params.push(containsPattern(storedTag(filter.tag)));
    }
    return this.page(conditions.join(' AND '), params, filter, ORDER_BY[filter.sort]);
  }

  /** A page of the matching rows, newest first, with the count over all pages. */
  private async page(
    where: string,
    params: unknown[],
    { limit, offset }: { limit: number; offset: number },
    orderBy: string = ORDER_BY.newest,
  ): Promise<{ total: number; plugins: UserPlugin[] }> {
    const [counted] = (await this.plugins.query(
      `SELECT COUNT(1) AS \`cnt\` FROM \`user_plugins\` WHERE ${where}`,
      params,
    )) as Array<{ cnt: number | string }>;
    const rows = (await this.plugins.query(
      `SELECT ${this.listed().select} FROM \`user_plugins\` WHERE ${where} ` +
        `ORDER BY ${orderBy} LIMIT ? OFFSET ?`,
      [...params, limit, offset],
    )) as Array<Record<string, unknown>>;
    return { total: Number(counted?.cnt ?? 0), plugins: rows.map((row) => this.fromRow(row)) };
  }

  /** The listed columns' metadata, found once: TypeORM searches a list on every lookup. */
  private listedColumns?: {
    select: string;
    columns: ReadonlyArray<{ property: string; alias: string; column: ColumnMetadata; plain: boolean }>;
  };

  private listed() {
    if (!this.listedColumns) {
      const columns = LISTED_COLUMNS.map((property) => {
        const column = this.plugins.metadata.findColumnWithPropertyName(property)!;
        const plain = PLAIN_COLUMN_TYPES.has(String(column.type)) && !column.transformer;
        return { property, alias: `plugin_${column.databaseName}`, column, plain };
      });
      const select = columns
        .map(({ column, alias }) => `\`${column.databaseName}\` AS \`${alias}\``)
        .join(', ');
      this.listedColumns = { select, columns };
    }
    return this.listedColumns;
  }

  /**
   * Listing rows skip TypeORM's entity hydration, the largest cost of a catalogue page. Text and
   * integer columns come from both drivers as stored; every other value (dates) goes through
   * the driver's own conversion, so it comes out the same on SQLite and MySQL. Only the columns
   * of the widest view are read (never file_path).
   */
  private fromRow(row: Record<string, unknown>): UserPlugin {
    const driver = this.plugins.manager.connection.driver;
    const plugin = new UserPlugin();
    const fields = plugin as unknown as Record<string, unknown>;
    for (const { property, alias, column, plain } of this.listed().columns) {
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
    return this.page('`user_id` = ?', [userId], page);
  }

  /** Names compare as user names do (identityKey), on every database alike, as the unique index does. */
  nameTaken(name: string): Promise<boolean> {
    return this.plugins.existsBy({ nameKey: identityKey(name) });
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
    // A copy is inserted: a transaction that lost a write conflict runs again, and must not
    // insert the id its rolled-back run was given.
    const result = await manager.insert(UserPlugin, { ...plugin });
    plugin.id = Number((result.identifiers[0] as { id: number | string }).id);
  }

  /**
   * Takes the plugin's row lock until the transaction ends and reads the row under it: every
   * decision on one plugin (reviews, new versions, ratings, delete) goes one at a time.
   */
  async lockAndRead(manager: EntityManager, id: number): Promise<UserPlugin | null> {
    await manager.query('UPDATE user_plugins SET id = id WHERE id = ?', [id]);
    return manager.findOneBy(UserPlugin, { id });
  }

  async update(manager: EntityManager, id: number, values: Partial<UserPlugin>): Promise<void> {
    await manager.update(UserPlugin, { id }, values);
  }

  /** Its versions, approvals and ratings go with it (foreign keys); its audit entries stay. */
  async delete(manager: EntityManager, id: number): Promise<void> {
    await manager.delete(UserPlugin, { id });
  }

  /** What the manifest lists: approved, with a digest, and a file that is there and unaltered. */
  manifestEntries(): Promise<Array<{ id: number; name: string; version: string; sha256: string }>> {
    return this.plugins
      .createQueryBuilder('p')
      .select(['p.id', 'p.name', 'p.version', 'p.sha256'])
      .where("p.status = 'approved'")
      .andWhere('p.sha256 IS NOT NULL AND p.file_missing_at IS NULL AND p.file_altered_at IS NULL')
      .orderBy('p.id', 'ASC')
      .getMany() as Promise<Array<{ id: number; name: string; version: string; sha256: string }>>;
  }

  /** Approved plugins' served files, for the digest check of the reconciler and svc-admin. */
  approvedFiles(): Promise<Array<Pick<UserPlugin, 'id' | 'name' | 'filePath' | 'sha256' | 'fileAlteredAt'>>> {
    return this.plugins.find({
      select: { id: true, name: true, filePath: true, sha256: true, fileAlteredAt: true },
      where: { status: 'approved' },
    });
  }

  async setDigestIfUnset(id: number, filePath: string, sha256: string): Promise<void> {
    await this.plugins.update({ id, filePath, sha256: IsNull() }, { sha256 });
  }

  /** Marks (a Date) or clears (null) an altered file; false when the row is gone or already so. */
  async setFileAltered(id: number, at: Date | null): Promise<boolean> {
    const updated = await this.plugins.update(
      { id, fileAlteredAt: at === null ? Not(IsNull()) : IsNull() },
      { fileAlteredAt: at },
    );
    return Boolean(updated.affected);
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
    const updated = await this.plugins.update(
      { id, fileMissingAt: at === null ? Not(IsNull()) : IsNull() },
      { fileMissingAt: at },
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
    const updated = await this.plugins.update(where, values);
    return Boolean(updated.affected);
  }
}
