import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, IsNull, Not, Repository } from 'typeorm';
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

  /**
   * The catalogue's SQL written out rather than built: TypeORM's query builder took longer to
   * write these two statements than the database took to run them (`npm run bench:profile`).
   * Backticks quote names on SQLite and MySQL alike; every value is a bound parameter.
   */
  catalogue(filter: CatalogueFilter): Promise<{ total: number; plugins: UserPlugin[] }> {
    const conditions = ['`status` = ?'];
    const params: unknown[] = [filter.status];
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
        `(LOWER(\`name\`) LIKE ? ESCAPE '${LIKE_ESCAPE}' OR LOWER(\`description\`) LIKE ? ESCAPE '${LIKE_ESCAPE}')`,
      );
      params.push(pattern, pattern);
    }
    if (filter.tag) {
      conditions.push(`\`tags\` LIKE ? ESCAPE '${LIKE_ESCAPE}'`);
      params.push(containsPattern(storedTag(filter.tag)));
    }
    return this.page(conditions.join(' AND '), params, filter);
  }

  /** A page of the matching rows, newest first, with the count over all pages. */
  private async page(
    where: string,
    params: unknown[],
    { limit, offset }: { limit: number; offset: number },
  ): Promise<{ total: number; plugins: UserPlugin[] }> {
    const [counted] = (await this.plugins.query(
      `SELECT COUNT(1) AS \`cnt\` FROM \`user_plugins\` WHERE ${where}`,
      params,
    )) as Array<{ cnt: number | string }>;
    const rows = (await this.plugins.query(
      `SELECT ${this.listed().select} FROM \`user_plugins\` WHERE ${where} ` +
        'ORDER BY `created_at` DESC, `id` DESC LIMIT ? OFFSET ?',
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
