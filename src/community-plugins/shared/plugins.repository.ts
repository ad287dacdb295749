import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { setImmediate } from 'node:timers/promises';
import { EntityManager, IsNull, Not, Repository } from 'typeorm';
import { RULES_VERSION } from '../../plugin-validator';
import { retryOnDeadlock } from '../../database/deadlock';
import { identityKey } from '../../users/identity-key';
import { IN_NO_LIST, keptCount, membershipOf, moveBetweenLists, recountLists } from '../catalogue/index/catalogue-counts';
import type { CatalogueView, KeptCount, Membership, Recount } from '../catalogue/index/catalogue-counts';
import type { PluginGroup, PluginStatus, PluginType } from './plugin-constants';
import {
  indexPlugins,
  listCode,
  reindexPlugin,
  relistPlugins,
  repairIndex,
  RUNS_IN_VIEW,
  RUNS_NEWEST_FIRST,
  searchMatches,
  someUnindexed,
  unindexPlugins,
} from '../catalogue/index/plugin-search-index';
import type { IndexedPlugin, IndexRepair } from '../catalogue/index/plugin-search-index';
import type { RunQuery } from '../catalogue/index/run-query';
import { UserPlugin } from './user-plugin.entity';
import { PUBLIC_VIEW_COLUMNS, publicViewOfRow } from '../views/plugin-views';
import type { PublicPluginView, PublicViewRow } from '../views/plugin-views';

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

const INDEXED_FIELDS = ['name', 'description', 'author', 'tags'] as const satisfies ReadonlyArray<
  keyof UserPlugin
>;

/** What the manifest lists: approved, with a digest, and a file that is there and unaltered. */
const MANIFEST_LISTED =
  "p.status = 'approved' AND p.sha256 IS NOT NULL AND p.file_missing_at IS NULL AND p.file_altered_at IS NULL";

export interface ManifestEntryRow {
  id: number;
  name: string;
  version: string;
  sha256: string;
}

type ManifestSnapshotRow = { serial: number | string | null; id: number | string | null } & Omit<
  ManifestEntryRow,
  'id'
>;

/**
 * A plugin's move between the catalogue's lists, in the transaction that writes its row: the
 * kept counts, and the lists its runs carry (set even when the move is none, which puts right
 * runs a writer that bypassed the index left behind).
 */
async function moveLists(run: RunQuery, id: number, before: Membership, after: Membership): Promise<void> {
  await moveBetweenLists(run, before, after);
  await relistPlugins(run, [id], listCode(after));
}

const runner =
  (manager: EntityManager): RunQuery =>
  (sql, params) =>
    manager.query(sql, params) as Promise<unknown>;

/** What the search index holds of a plugin. */
const indexedOf = (plugin: UserPlugin): IndexedPlugin => ({
  id: plugin.id,
  name: plugin.name,
  description: plugin.description,
  author: plugin.author,
  tags: plugin.tags,
  list: listCode(membershipOf(plugin)),
  createdMs: plugin.createdAt.getTime(),
});

/** Where a page's matching ids come from: user_plugins, or the search index's runs. */
interface Matches {
  from: string;
  where: string;
  params: unknown[];
  /** The plugin id and the sort, in the terms of `from`. */
  id: string;
  order: string;
}

/**
 * What a listing statement reads and what it makes of each row: entities (the admin and owner
 * lists), or public views built straight from the row (everyone else's catalogue).
 */
interface ListingShape<T> {
  select: string;
  read(row: Record<string, unknown>): T;
}

/** A page of a list and the list's size. */
export interface ListPage<T> {
  total: number;
  plugins: T[];
}

/** How TypeORM writes a datetime on SQLite (UTC): the listing turns it into ISO text by hand. */
const SQLITE_DATETIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/;

/** Column types both drivers hand over as JavaScript strings and numbers already. */
const PLAIN_COLUMN_TYPES = new Set(['varchar', 'text', 'int']);

export const CATALOGUE_SORTS = ['newest', 'rating', 'name'] as const;
export type CatalogueSort = (typeof CATALOGUE_SORTS)[number];

/** Each sort as terms and directions, ending in `id` so it is a total order that can be read backwards. */
const ORDER_TERMS: Record<CatalogueSort, ReadonlyArray<readonly [string, 'ASC' | 'DESC']>> = {
  newest: [
    ['`created_at`', 'DESC'],
    ['`id`', 'DESC'],
  ],
  // The mean without dividing by zero; more ratings first among equal means.
  rating: [
    ['CASE WHEN `ratings_count` = 0 THEN 0 ELSE `rating_total` * 1.0 / `ratings_count` END', 'DESC'],
    ['`ratings_count`', 'DESC'],
    ['`created_at`', 'DESC'],
    ['`id`', 'DESC'],
  ],
  name: [
    ['LOWER(`name`)', 'ASC'],
    ['`id`', 'ASC'],
  ],
};

const orderBy = (sort: CatalogueSort, backwards = false): string =>
  ORDER_TERMS[sort]
    .map(([term, direction]) => `${term} ${backwards === (direction === 'ASC') ? 'DESC' : 'ASC'}`)
    .join(', ');

/** Rows per statement of the reads that go through every plugin (see inIdPages). */
const READ_PAGE = 2000;

/** Positions between two remembered starts of a deep newest-first page (see pageFromCheckpoint). */
export const CHECKPOINT_EVERY = 1000;

/** The newest-first sort key of one plugin, as the driver gave it (so it compares as stored). */
interface CheckpointKey {
  createdAt: unknown;
  id: number;
}

/** From a checkpoint on, newest first: (created_at, id) at most the checkpoint's, in a form both planners read as an index range. */
const FROM_KEY = '`created_at` <= ? AND (`created_at` < ? OR `id` <= ?)';

/** The unfiltered list a filter asks for, if it is one: only status and the caller's view are set. */
function unfilteredList(filter: CatalogueFilter): CatalogueView | null {
  const narrowed =
    filter.group ||
    filter.type ||
    filter.q ||
    filter.tag ||
    (filter.minRating !== undefined && filter.minRating > 0);
  if (filter.status !== 'approved' || narrowed) return null;
  return filter.includeAltered ? 'approved' : 'listed';
}

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
    const rows = (await this.plugins.query(
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
    const found = (await this.plugins.query(
      `SELECT ${matches.id} AS \`id\`, COUNT(1) OVER () AS \`cnt\` FROM ${matches.from} WHERE ${matches.where} ` +
        `ORDER BY ${matches.order} LIMIT ? OFFSET ?`,
      [...matches.params, limit, offset],
    )) as Array<{ id: number | string; cnt: number | string }>;
    if (found.length === 0) {
      if (offset === 0) return { total: 0, plugins: [] };
      const [counted] = (await this.plugins.query(
        `SELECT COUNT(1) AS \`cnt\` FROM ${matches.from} WHERE ${matches.where}`,
        matches.params,
      )) as Array<{ cnt: number | string }>;
      return { total: Number(counted?.cnt ?? 0), plugins: [] };
    }
    const rows = (await this.plugins.query(
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
    const [counted] = (await this.plugins.query(
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
    const rows = (await this.plugins.query(
      `SELECT ${shape.select} FROM \`user_plugins\` WHERE \`id\` IN (SELECT \`id\` FROM ` +
        `(SELECT \`id\` FROM \`user_plugins\` WHERE ${where} ORDER BY ${orderBy(sort, backwards)} ` +
        `LIMIT ? OFFSET ?) AS \`page\`) ORDER BY ${orderBy(sort)}`,
      [...params, window.limit, window.offset],
    )) as Array<Record<string, unknown>>;
    return rows.map((row) => shape.read(row));
  }

  /**
   * A page of an unfiltered list, whose size is kept (catalogue-counts.ts) rather than counted.
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
    const rows = (await this.plugins.query(
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
    const [row] = (await this.plugins.query(`${sql} LIMIT 1 OFFSET ?`, [...params, walk])) as Array<{
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

  private readonly run: RunQuery = (sql, params) => this.plugins.query(sql, params) as Promise<unknown>;

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
    // Its search and tag index rows, and the catalogue's counts, in the same transaction.
    await indexPlugins(runner(manager), [indexedOf(plugin)]);
    await moveBetweenLists(runner(manager), IN_NO_LIST, membershipOf(plugin));
  }

  /**
   * Takes the plugin's row lock until the transaction ends and reads the row under it: every
   * decision on one plugin (reviews, new versions, ratings, delete) goes one at a time.
   */
  async lockAndRead(manager: EntityManager, id: number): Promise<UserPlugin | null> {
    await manager.query('UPDATE user_plugins SET id = id WHERE id = ?', [id]);
    return manager.findOneBy(UserPlugin, { id });
  }

  /**
   * A change to an indexed field (none of today's writes makes one) re-indexes the plugin; a
   * change of status or of the altered mark moves it between the catalogue's lists, whose
   * counts and the plugin's runs change in the same transaction.
   */
  async update(manager: EntityManager, id: number, values: Partial<UserPlugin>): Promise<void> {
    const moves = values.status !== undefined || values.fileAlteredAt !== undefined;
    const before = moves ? await this.lockedListState(manager, id) : null;
    await manager.update(UserPlugin, { id }, values);
    if (before) {
      const after = {
        status: values.status ?? before.status,
        fileAlteredAt: values.fileAlteredAt !== undefined ? values.fileAlteredAt : before.fileAlteredAt,
      };
      await moveLists(runner(manager), id, membershipOf(before), membershipOf(after));
    }
    if (INDEXED_FIELDS.some((field) => values[field] !== undefined)) {
      const plugin = await manager.findOneBy(UserPlugin, { id });
      if (plugin) await reindexPlugin(runner(manager), indexedOf(plugin));
    }
  }

  /** Its versions, approvals and ratings go with it (foreign keys); its audit entries stay. */
  async delete(manager: EntityManager, id: number): Promise<void> {
    const before = await this.lockedListState(manager, id);
    await unindexPlugins(runner(manager), [id]);
    const deleted = await manager.delete(UserPlugin, { id });
    if (before && deleted.affected) await moveBetweenLists(runner(manager), membershipOf(before), IN_NO_LIST);
  }

  /**
   * What decides a plugin's lists, read as committed now and locked until the transaction ends
   * (MySQL reads a snapshot otherwise; SQLite's one writer reads what is current).
   */
  private async lockedListState(
    manager: EntityManager,
    id: number,
  ): Promise<{ status: string; fileAlteredAt: unknown } | null> {
    const mysql = manager.connection.options.type === 'mysql';
    const [row] = (await manager.query(
      `SELECT \`status\`, \`file_altered_at\` FROM \`user_plugins\` WHERE \`id\` = ?${mysql ? ' FOR UPDATE' : ''}`,
      [id],
    )) as Array<{ status: string; file_altered_at: unknown }>;
    return row ? { status: row.status, fileAlteredAt: row.file_altered_at } : null;
  }

  /**
   * Counts the unfiltered lists and puts their kept counts right (catalogue-counts.ts), in a
   * transaction of its own, run again when it loses to a concurrent write; which counts were wrong.
   */
  recountCatalogue(): Promise<Recount[]> {
    const manager = this.plugins.manager;
    return retryOnDeadlock(() => manager.transaction((inner) => recountLists(runner(inner))));
  }

  /**
   * Puts the search index right where older code left it wrong (plugin-search-index.ts,
   * repairIndex), each window's fixes a transaction of its own, run again when it loses to a
   * concurrent write; what it did. With `ifUnindexed`, only when counts show a plugin without
   * index rows: the lists are then left to the next full run.
   */
  async repairSearchIndex({ ifUnindexed = false } = {}): Promise<IndexRepair> {
    const manager = this.plugins.manager;
    if (ifUnindexed && !(await someUnindexed(this.run))) return { indexed: 0, relisted: 0 };
    return repairIndex(runner(manager), (work) =>
      retryOnDeadlock(() => manager.transaction((inner) => work(runner(inner)))),
    );
  }

  /**
   * What the manifest lists (approved, with a digest, and a file that is there and unaltered)
   * and the audit chain's head count as of the same instant: one statement reads one snapshot
   * on SQLite and InnoDB at any isolation level, and every decision that changes the list
   * appends to the chain in its own transaction, so the entries are exactly the state after
   * `serial` audit entries. Two statements, even in one transaction, would depend on the
   * isolation level (READ COMMITTED takes a fresh snapshot per statement).
   */
  async manifestSnapshot(): Promise<{ serial: number; entries: ManifestEntryRow[] }> {
    // The head as a subquery keeps InnoDB reading user_plugins in primary-key order (joining it
    // sorted 100,000 rows in a temporary table: 780 ms against 340 ms). Only an empty list needs
    // the join, which answers the head with no plugin row; it is a snapshot of its own, whole.
    const listed = (await this.plugins.query(
      `SELECT (SELECT entries FROM audit_chain WHERE id = 1) AS serial, p.id, p.name, p.version, p.sha256
         FROM user_plugins p WHERE ${MANIFEST_LISTED} ORDER BY p.id`,
    )) as ManifestSnapshotRow[];
    const rows =
      listed.length > 0
        ? listed
        : ((await this.plugins.query(
            `SELECT c.entries AS serial, p.id, p.name, p.version, p.sha256
               FROM audit_chain c LEFT JOIN user_plugins p ON ${MANIFEST_LISTED} WHERE c.id = 1 ORDER BY p.id`,
          )) as ManifestSnapshotRow[]);
    if (rows.length === 0 || rows[0].serial === null) {
      throw new Error('The audit chain head (audit_chain, id 1) is missing');
    }
    return {
      serial: Number(rows[0].serial),
      entries: rows
        .filter((row) => row.id !== null)
        .map((row) => ({ id: Number(row.id), name: row.name, version: row.version, sha256: row.sha256 })),
    };
  }

  /**
   * Approved plugins' served files, for the digest check of the reconciler and svc-admin.
   * Plain rows read a page of ids at a time (see inIdPages); only whether a file is marked
   * altered is read of its mark.
   */
  async approvedFiles(): Promise<
    Array<Pick<UserPlugin, 'id' | 'name' | 'filePath' | 'sha256'> & { fileAltered: boolean }>
  > {
    const rows = await this.inIdPages<{
      id: number | string;
      name: string;
      file_path: string;
      sha256: string | null;
      file_altered_at: unknown;
    }>('`id`, `name`, `file_path`, `sha256`, `file_altered_at`', "`status` = 'approved'");
    return rows.map((row) => ({
      id: Number(row.id),
      name: row.name,
      filePath: row.file_path,
      sha256: row.sha256,
      fileAltered: row.file_altered_at !== null,
    }));
  }

  /**
   * Every row matching `where`, in id order, READ_PAGE rows per statement with a turn of the
   * event loop between: better-sqlite3 holds the event loop while a statement runs, and one
   * over 100,000 rows held it for 0.3 to 0.5 s (and TypeORM's entities cost as much again).
   */
  private async inIdPages<Row extends { id: number | string }>(
    columns: string,
    where = '1 = 1',
  ): Promise<Row[]> {
    const rows: Row[] = [];
    for (let after = 0; ;) {
      const page = (await this.plugins.query(
        `SELECT ${columns} FROM \`user_plugins\` WHERE ${where} AND \`id\` > ? ORDER BY \`id\` LIMIT ${READ_PAGE}`,
        [after],
      )) as Row[];
      rows.push(...page);
      if (page.length < READ_PAGE) return rows;
      after = Number(page[page.length - 1].id);
      await setImmediate();
    }
  }

  async setDigestIfUnset(id: number, filePath: string, sha256: string): Promise<void> {
    await this.plugins.update({ id, filePath, sha256: IsNull() }, { sha256 });
  }

  /**
   * Marks (a Date) or clears (null) an altered file; false when the row is gone or already so.
   * An approved plugin leaves the public list while marked: its count changes with the mark.
   */
  setFileAltered(id: number, at: Date | null): Promise<boolean> {
    const manager = this.plugins.manager;
    return retryOnDeadlock(() =>
      manager.transaction(async (inner) => {
        const updated = await inner.update(
          UserPlugin,
          { id, fileAlteredAt: at === null ? Not(IsNull()) : IsNull() },
          { fileAlteredAt: at },
        );
        if (!updated.affected) return false;
        const state = await this.lockedListState(inner, id);
        if (state) {
          const before = membershipOf({ status: state.status, fileAlteredAt: at === null ? 'marked' : null });
          await moveLists(runner(inner), id, before, membershipOf(state));
        }
        return true;
      }),
    );
  }

  /**
   * What the reconciler compares with the plugin directory: every row's file, and whether it
   * is marked missing. Plain rows, not entities: at 100,000 plugins hydration alone took
   * longer than the rest of a start.
   */
  async files(): Promise<Array<{ id: number; name: string; filePath: string; fileMissing: boolean }>> {
    const rows = await this.inIdPages<{
      id: number | string;
      name: string;
      file_path: string;
      file_missing_at: unknown;
    }>('`id`, `name`, `file_path`, `file_missing_at`');
    return rows.map((row) => ({
      id: Number(row.id),
      name: row.name,
      filePath: row.file_path,
      fileMissing: row.file_missing_at !== null,
    }));
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
}
