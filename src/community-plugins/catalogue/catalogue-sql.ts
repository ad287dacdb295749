import type { PluginGroup, PluginStatus, PluginType } from '../shared/plugin-constants';
import type { UserPlugin } from '../shared/user-plugin.entity';
import type { CatalogueView } from './index/catalogue-counts';

/*
 * The catalogue's SQL pieces (catalogue.repository.ts writes its statements from them): the
 * columns a list reads, the sorts as index-friendly orders, and which unfiltered list a filter is.
 */

/** The columns the admin view (the widest one) shows: never file_path. */
export const LISTED_COLUMNS = [
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

/** Where a page's matching ids come from: user_plugins, or the search index's runs. */
export interface Matches {
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
export interface ListingShape<T> {
  select: string;
  read(row: Record<string, unknown>): T;
}

/** A page of a list and the list's size. */
export interface ListPage<T> {
  total: number;
  plugins: T[];
}

/** How TypeORM writes a datetime on SQLite (UTC): the listing turns it into ISO text by hand. */
export const SQLITE_DATETIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/;

/** Column types both drivers hand over as JavaScript strings and numbers already. */
export const PLAIN_COLUMN_TYPES = new Set(['varchar', 'text', 'int']);

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

export const orderBy = (sort: CatalogueSort, backwards = false): string =>
  ORDER_TERMS[sort]
    .map(([term, direction]) => `${term} ${backwards === (direction === 'ASC') ? 'DESC' : 'ASC'}`)
    .join(', ');

/** Positions between two remembered starts of a deep newest-first page (see pageFromCheckpoint). */
export const CHECKPOINT_EVERY = 1000;

/** The newest-first sort key of one plugin, as the driver gave it (so it compares as stored). */
export interface CheckpointKey {
  createdAt: unknown;
  id: number;
}

/** From a checkpoint on, newest first: (created_at, id) at most the checkpoint's, in a form both planners read as an index range. */
export const FROM_KEY = '`created_at` <= ? AND (`created_at` < ? OR `id` <= ?)';

/** The unfiltered list a filter asks for, if it is one: only status and the caller's view are set. */
export function unfilteredList(filter: CatalogueFilter): CatalogueView | null {
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
  /** One of its tags, lower case. */
  tag?: string;
  /** Mean rating, as shown (one decimal), at least this. */
  minRating?: number;
  sort: CatalogueSort;
  /** Admins see approved plugins whose file was altered (marked); nobody else does. */
  includeAltered: boolean;
  limit: number;
  offset: number;
}
