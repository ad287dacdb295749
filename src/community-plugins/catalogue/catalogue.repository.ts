import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PlainReads } from '../../database/plain-reads';
import { RULES_VERSION } from '../../plugin-validator';
import { UserPlugin } from '../shared/user-plugin.entity';
import { publicViewOfRow } from '../views/plugin-views';
import { PUBLIC_VIEW_COLUMNS } from '../views/public-view-columns';
import type { PublicPluginView } from '../views/plugin-views';
import type { PublicViewRow } from '../views/public-view-columns';
import {
  CatalogueFilter,
  CatalogueSort,
  CHECKPOINT_EVERY,
  CheckpointKey,
  FROM_KEY,
  LISTED_COLUMNS,
  ListingShape,
  ListPage,
  Matches,
  orderBy,
  PLAIN_COLUMN_TYPES,
  SQLITE_DATETIME,
  unfilteredList,
} from './catalogue-sql';
import { keptCount } from './index/catalogue-counts';
import type { CatalogueView, KeptCount } from './index/catalogue-counts';
import { RUNS_IN_VIEW, RUNS_NEWEST_FIRST, searchMatches } from './index/plugin-search-index';
import type { RunQuery } from './index/run-query';

/**
 * The catalogue's reads of `user_plugins`: a page of a list (public, admins', pending, one
 * uploader's), counted and paged from the search index's runs or the kept counts where they
 * can. Writes to the rows are shared/plugins.repository.ts's, which keeps that index in step.
 */
@Injectable()
export class CatalogueRepository {
  constructor(
    @InjectRepository(UserPlugin) private readonly plugins: Repository<UserPlugin>,
    private readonly reads: PlainReads,
  ) {}

  /** A catalogue page of entities: what admins list (their view needs every listed column). */
  catalogue(filter: CatalogueFilter): Promise<ListPage<UserPlugin>> {
    return this.listing(filter, this.entityShape());
  }

  /**
   * A catalogue page in the public view, each plugin built from its row with only the columns
   * the view shows: no entity, and no second pass over the objects before the JSON.
   */
  publicCatalogue(filter: CatalogueFilter): Promise<ListPage<PublicPluginView>> {
    return this.listing(filter, this.publicShape());
  }

  /**
   * The catalogue's SQL written out rather than built: TypeORM's query builder took longer to
   * write these two statements than the database took to run them (`npm run bench:profile`).
   * Backticks quote names on SQLite and MySQL alike; every value is a bound parameter.
   */
  private async listing<T>(filter: CatalogueFilter, shape: ListingShape<T>): Promise<ListPage<T>> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    const narrowed = filter.q || filter.tag ? '+' : '';
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
      // With q= or tag=, the unary plus keeps the planner off the status index, so it starts
      // from the few plugins the search or tag index names rather than from every approved one
      // (SQLite, without statistics, guessed the other way round).
      conditions.push(`${narrowed}\`status\` = ?`);
      params.push(filter.status);
    }
    if (filter.status === 'approved' && !filter.includeAltered)
      conditions.push(`${narrowed}\`file_altered_at\` IS NULL`);
    if (filter.group) {
      conditions.push('`group` = ?');
      params.push(filter.group);
    }
    if (filter.type) {
      conditions.push('`type` = ?');
      params.push(filter.type);
    }
    if (filter.q) {
      const matches = await searchMatches(this.run, filter.q);
      if (matches === null) return { total: 0, plugins: [] };
      // Newest first in an unfiltered list but for q=: counted and paged from the runs alone.
      const view = filter.sort === 'newest' ? unfilteredList({ ...filter, q: undefined }) : null;
      if (view) {
        return this.narrowedPage(
          {
            ...matches,
            where: `${matches.where} AND ${RUNS_IN_VIEW[view]}`,
            id: 'r.`plugin_id`',
            order: RUNS_NEWEST_FIRST,
          },
          filter,
          filter.sort,
          shape,
        );
      }
      // One subquery that does not refer to the outer row: run once, not once per plugin.
      conditions.push(`\`id\` IN (SELECT r.\`plugin_id\` FROM ${matches.from} WHERE ${matches.where})`);
      params.push(...matches.params);
    }
    if (filter.minRating !== undefined && filter.minRating > 0) {
      // The shown mean is rounded half up to tenths: it is at least m exactly when the mean is at
      // least m - 0.05, which in integers is 20 * total >= (20 * m - 1) * count.
      conditions.push('`ratings_count` > 0 AND 20 * `rating_total` >= ? * `ratings_count`');
      params.push(Math.round(filter.minRating * 10) * 2 - 1);
    }
    if (filter.tag) {
      conditions.push('`id` IN (SELECT t.`plugin_id` FROM `plugin_tags` t WHERE t.`tag` = ?)');
      params.push(filter.tag);
    }
    const where = conditions.join(' AND ');
    if (narrowed) {
      const matches = { from: '`user_plugins`', where, params, id: '`id`', order: orderBy(filter.sort) };
      return this.narrowedPage(matches, filter, filter.sort, shape);
    }
    const view = unfilteredList(filter);
    if (view) {
      const first =
        filter.offset < CHECKPOINT_EVERY &&
        (await this.pageWithKeptCount(view, where, params, filter, shape));
      if (first) return first;
      const kept = await keptCount(this.run, view);
      const page = kept && (await this.keptPage(view, kept, where, params, filter, shape));
      if (page) return page;
    }
    return this.page(where, params, filter, shape, filter.sort);
  }

  /**
   * The pages near the front of an unfiltered list (what clients load first) and the list's
   * kept size in one statement: one statement reads one snapshot, on SQLite and InnoDB alike,
   * so the page and `total` describe the same list. Null when it read no row (a page past the
   * end, or no count row): the caller takes the general way.
   */
  private async pageWithKeptCount<T>(
    view: CatalogueView,
    where: string,
    params: unknown[],
    { limit, offset, sort }: { limit: number; offset: number; sort: CatalogueSort },
    shape: ListingShape<T>,
  ): Promise<ListPage<T> | null> {
    const rows = (await this.reads.rows(
      'SELECT (SELECT c.`plugins` FROM `catalogue_counts` c WHERE c.`name` = ?) AS `kept_total`, ' +
        `${shape.select} FROM \`user_plugins\` WHERE \`id\` IN (SELECT \`id\` FROM ` +
        `(SELECT \`id\` FROM \`user_plugins\` WHERE ${where} ORDER BY ${orderBy(sort)} ` +
        `LIMIT ? OFFSET ?) AS \`page\`) ORDER BY ${orderBy(sort)}`,
      [view, ...params, limit, offset],
    )) as Array<Record<string, unknown>>;
    if (rows.length === 0 || rows[0].kept_total === null) return null;
    return { total: Number(rows[0].kept_total), plugins: rows.map((row) => shape.read(row)) };
  }

  /**
   * A page of a list narrowed by q= or tag=: its matches are few next to the catalogue, and one
   * statement finds them, counts them (a window count, before LIMIT) and picks the page; the
   * page's rows are read by id. Only a page past the end needs the count on its own.
   */
  private async narrowedPage<T>(
    matches: Matches,
    { limit, offset }: { limit: number; offset: number },
    sort: CatalogueSort,
    shape: ListingShape<T>,
  ): Promise<ListPage<T>> {
    const found = (await this.reads.rows(
      `SELECT ${matches.id} AS \`id\`, COUNT(1) OVER () AS \`cnt\` FROM ${matches.from} WHERE ${matches.where} ` +
        `ORDER BY ${matches.order} LIMIT ? OFFSET ?`,
      [...matches.params, limit, offset],
    )) as Array<{ id: number | string; cnt: number | string }>;
    if (found.length === 0) {
      if (offset === 0) return { total: 0, plugins: [] };
      const [counted] = (await this.reads.rows(
        `SELECT COUNT(1) AS \`cnt\` FROM ${matches.from} WHERE ${matches.where}`,
        matches.params,
      )) as Array<{ cnt: number | string }>;
      return { total: Number(counted?.cnt ?? 0), plugins: [] };
    }
    const rows = (await this.reads.rows(
      `SELECT ${shape.select} FROM \`user_plugins\` WHERE \`id\` IN (${found.map(() => '?').join(', ')}) ` +
        `ORDER BY ${orderBy(sort)}`,
      found.map((row) => row.id),
    )) as Array<Record<string, unknown>>;
    return { total: Number(found[0].cnt), plugins: rows.map((row) => shape.read(row)) };
  }

  /**
   * A page of the matching rows with the count over all pages (counted here). A page past the
   * end costs nothing more than the count.
   */
  private async page<T>(
    where: string,
    params: unknown[],
    { limit, offset }: { limit: number; offset: number },
    shape: ListingShape<T>,
    sort: CatalogueSort = 'newest',
  ): Promise<ListPage<T>> {
    const [counted] = (await this.reads.rows(
      `SELECT COUNT(1) AS \`cnt\` FROM \`user_plugins\` WHERE ${where}`,
      params,
    )) as Array<{ cnt: number | string }>;
    const total = Number(counted?.cnt ?? 0);
    if (offset >= total) return { total, plugins: [] };
    return { total, plugins: await this.readPage(where, params, { limit, offset }, sort, total, shape) };
  }

  /**
   * The rows of a page of a list of `total` rows: the page's ids are found first (from an index
   * alone when one covers the filter) and only those rows are read. A page past the middle is
   * found from the other end, so the last page costs what the first does.
   */
  private async readPage<T>(
    where: string,
    params: unknown[],
    { limit, offset }: { limit: number; offset: number },
    sort: CatalogueSort,
    total: number,
    shape: ListingShape<T>,
  ): Promise<T[]> {
    const fromEnd = Math.max(0, total - offset - limit);
    const backwards = fromEnd < offset;
    const window = backwards ? { limit: total - offset - fromEnd, offset: fromEnd } : { limit, offset };
    const rows = (await this.reads.rows(
      `SELECT ${shape.select} FROM \`user_plugins\` WHERE \`id\` IN (SELECT \`id\` FROM ` +
        `(SELECT \`id\` FROM \`user_plugins\` WHERE ${where} ORDER BY ${orderBy(sort, backwards)} ` +
        `LIMIT ? OFFSET ?) AS \`page\`) ORDER BY ${orderBy(sort)}`,
      [...params, window.limit, window.offset],
    )) as Array<Record<string, unknown>>;
    return rows.map((row) => shape.read(row));
  }

  /**
   * A page of an unfiltered list, whose size is kept (index/catalogue-counts.ts) rather than counted.
   * Each statement reads the page only if the list's change count is still the one read with
   * its size, so the page and `total` describe the same list; when it is not (a plugin was
   * approved or removed in between), null, and the caller counts. A newest-first page further
   * than CHECKPOINT_EVERY from both ends starts from a remembered checkpoint.
   */
  private async keptPage<T>(
    view: CatalogueView,
    kept: KeptCount,
    where: string,
    params: unknown[],
    { limit, offset, sort }: { limit: number; offset: number; sort: CatalogueSort },
    shape: ListingShape<T>,
  ): Promise<ListPage<T> | null> {
    const total = kept.plugins;
    if (offset >= total) return { total, plugins: [] };
    const unchanged = {
      where: `${where} AND (SELECT c.\`changes\` FROM \`catalogue_counts\` c WHERE c.\`name\` = ?) = ?`,
      params: [...params, view, kept.changes],
    };
    const deep = sort === 'newest' && Math.min(offset, total - offset - limit) >= CHECKPOINT_EVERY;
    const plugins = deep
      ? await this.pageFromCheckpoint(view, kept, unchanged, { limit, offset }, shape)
      : await this.readPage(unchanged.where, unchanged.params, { limit, offset }, sort, total, shape);
    return plugins.length > 0 ? { total, plugins } : null;
  }

  /**
   * Deep pages of the newest-first lists (issue 22: OFFSET 50,000 walked 50,000 index entries,
   * 11 ms on MariaDB). Every CHECKPOINT_EVERY positions the sort key there (`created_at`, `id`)
   * is remembered, per list, under the list's change count; a page starts at the checkpoint
   * below it (one index range) and walks fewer than CHECKPOINT_EVERY entries. A checkpoint is
   * found once per change of the list, from the nearest known one or from the nearer end.
   * Approvals and removals are rare next to reads, and `created_at` and `id` never change, so
   * the remembered keys stay right until the change count moves.
   */
  private async pageFromCheckpoint<T>(
    view: CatalogueView,
    kept: KeptCount,
    unchanged: { where: string; params: unknown[] },
    { limit, offset }: { limit: number; offset: number },
    shape: ListingShape<T>,
  ): Promise<T[]> {
    const position = offset - (offset % CHECKPOINT_EVERY);
    const key = await this.checkpoint(view, kept, unchanged, position);
    if (!key) return [];
    const rows = (await this.reads.rows(
      `SELECT ${shape.select} FROM \`user_plugins\` WHERE \`id\` IN (SELECT \`id\` FROM ` +
        `(SELECT \`id\` FROM \`user_plugins\` WHERE ${unchanged.where} AND ${FROM_KEY} ` +
        `ORDER BY ${orderBy('newest')} LIMIT ? OFFSET ?) AS \`page\`) ORDER BY ${orderBy('newest')}`,
      [...unchanged.params, key.createdAt, key.createdAt, key.id, limit, offset - position],
    )) as Array<Record<string, unknown>>;
    return rows.map((row) => shape.read(row));
  }

  /** The sort key at `position` of the list as `kept` describes it; null when the list changed since. */
  private async checkpoint(
    view: CatalogueView,
    kept: KeptCount,
    unchanged: { where: string; params: unknown[] },
    position: number,
  ): Promise<CheckpointKey | null> {
    let known = this.checkpoints.get(view);
    if (!known || known.changes < kept.changes) {
      known = { changes: kept.changes, keys: new Map() };
      this.checkpoints.set(view, known);
    } else if (known.changes > kept.changes) {
      // This request read the count before a newer one did: its keys are not kept.
      known = { changes: kept.changes, keys: new Map() };
    }
    const remembered = known.keys.get(position);
    if (remembered) return remembered;

    const below = Math.max(-1, ...[...known.keys.keys()].filter((at) => at < position));
    const fromEnd = kept.plugins - 1 - position;
    let sql = `SELECT \`created_at\`, \`id\` FROM \`user_plugins\` WHERE ${unchanged.where}`;
    let params = unchanged.params;
    let walk: number;
    if (below >= 0 && position - below <= Math.min(position, fromEnd)) {
      const start = known.keys.get(below)!;
      sql += ` AND ${FROM_KEY} ORDER BY ${orderBy('newest')}`;
      params = [...params, start.createdAt, start.createdAt, start.id];
      walk = position - below;
    } else if (position <= fromEnd) {
      sql += ` ORDER BY ${orderBy('newest')}`;
      walk = position;
    } else {
      sql += ` ORDER BY ${orderBy('newest', true)}`;
      walk = fromEnd;
    }
    const [row] = (await this.reads.rows(`${sql} LIMIT 1 OFFSET ?`, [...params, walk])) as Array<{
      created_at: unknown;
      id: number | string;
    }>;
    if (!row) return null;
    const key = { createdAt: row.created_at, id: Number(row.id) };
    known.keys.set(position, key);
    return key;
  }

  /** Each unfiltered list's remembered checkpoints (see pageFromCheckpoint), under its change count. */
  private readonly checkpoints = new Map<
    CatalogueView,
    { changes: number; keys: Map<number, CheckpointKey> }
  >();

  private readonly run: RunQuery = (sql, params = []) => this.reads.rows(sql, params);

  private entityShapeFound?: ListingShape<UserPlugin>;

  /**
   * Listing rows skip TypeORM's entity hydration, the largest cost of a catalogue page. Only
   * the columns of the widest view are read (never file_path); the columns' metadata is found
   * once (TypeORM searches a list on every lookup). Text and integer columns come from both
   * drivers as stored; every other value (dates) goes through the driver's own conversion, so
   * it comes out the same on SQLite and MySQL.
   */
  private entityShape(): ListingShape<UserPlugin> {
    if (!this.entityShapeFound) {
      const driver = this.plugins.manager.connection.driver;
      const columns = LISTED_COLUMNS.map((property) => {
        const column = this.plugins.metadata.findColumnWithPropertyName(property)!;
        const plain = PLAIN_COLUMN_TYPES.has(String(column.type)) && !column.transformer;
        return { property, alias: `plugin_${column.databaseName}`, column, plain };
      });
      this.entityShapeFound = {
        select: columns.map(({ column, alias }) => `\`${column.databaseName}\` AS \`${alias}\``).join(', '),
        read: (row) => {
          const plugin = new UserPlugin();
          const fields = plugin as unknown as Record<string, unknown>;
          for (const { property, alias, column, plain } of columns) {
            const value = row[alias];
            fields[property] = value === null || plain ? value : driver.prepareHydratedValue(value, column);
          }
          return plugin;
        },
      };
    }
    return this.entityShapeFound;
  }

  private publicShapeFound?: ListingShape<PublicPluginView>;

  /**
   * The public view's columns, each row made into the view at once. Dates become ISO text as
   * the driver's conversion would make them: MySQL hands over Dates; SQLite text written by
   * TypeORM is UTC to the millisecond, put into ISO form by hand; anything else goes through
   * the driver.
   */
  private publicShape(): ListingShape<PublicPluginView> {
    if (!this.publicShapeFound) {
      const driver = this.plugins.manager.connection.driver;
      const sqlite = this.plugins.manager.connection.options.type !== 'mysql';
      const createdAt = this.plugins.metadata.findColumnWithPropertyName('createdAt')!;
      const isoDate = (value: unknown): string => {
        if (value instanceof Date) return value.toISOString();
        if (sqlite && typeof value === 'string' && SQLITE_DATETIME.test(value))
          return `${value.slice(0, 10)}T${value.slice(11)}Z`;
        return (driver.prepareHydratedValue(value, createdAt) as Date).toISOString();
      };
      this.publicShapeFound = {
        select: PUBLIC_VIEW_COLUMNS.map((name) => `\`${name}\``).join(', '),
        read: (row) => publicViewOfRow(row as PublicViewRow, isoDate),
      };
    }
    return this.publicShapeFound;
  }

  /** A page of one user's uploads in any status, newest first. */
  uploadedBy(userId: number, page: { limit: number; offset: number }): Promise<ListPage<UserPlugin>> {
    return this.page('`user_id` = ?', [userId], page, this.entityShape());
  }
}
