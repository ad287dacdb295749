import { HttpStatus, Injectable, PipeTransform } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import {
  PLUGIN_GROUPS,
  PLUGIN_STATUSES,
  PLUGIN_TYPES,
  TAG_MAX_LENGTH,
  TAG_PATTERN,
} from '../shared/plugin-constants';
import { CATALOGUE_SORTS } from './catalogue-sql';
import type { CatalogueFilter } from './catalogue-sql';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
export const MAX_SEARCH_LENGTH = 200;
const MAX_OFFSET = 1_000_000_000;

/** The catalogue's query string, parsed: its filter, less what the caller's role decides. */
export type ListQuery = Omit<CatalogueFilter, 'includeAltered'>;

/** A page of a plugin list: `limit` and `offset` alone, as `mine/` takes them. */
export interface PageQuery {
  limit: number;
  offset: number;
}

export type ListQueryResult = { ok: true; query: ListQuery } | { ok: false; errors: Record<string, string> };

/**
 * The catalogue's query string. Absent or empty parameters take their defaults; a limit
 * above the maximum is lowered to it (the answer says which limit applied); anything
 * malformed, or given twice, is refused with a message per parameter.
 */
export function parseListQuery(raw: Record<string, unknown>): ListQueryResult {
  const errors: Record<string, string> = {};
  const text = (name: string): string | undefined => {
    const value = raw[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') {
      errors[name] = 'must be given once';
      return undefined;
    }
    return value === '' ? undefined : value;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[]): T | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    const match = allowed.find((option) => option === value);
    if (!match) errors[name] = `must be one of ${allowed.join(', ')}`;
    return match;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const value = text(name);
    if (value === undefined) return fallback;
    if (!/^\d{1,10}$/.test(value) || Number(value) < min) {
      errors[name] = `must be an integer of at least ${min}`;
      return fallback;
    }
    return Math.min(Number(value), max);
  };

  const status = oneOf('status', PLUGIN_STATUSES) ?? 'approved';
  const group = oneOf('group', PLUGIN_GROUPS);
  const type = oneOf('type', PLUGIN_TYPES);
  const q = text('q')?.trim();
  if (q !== undefined && [...q].length > MAX_SEARCH_LENGTH)
    errors.q = `must be at most ${MAX_SEARCH_LENGTH} characters`;
  const tag = text('tag')?.trim().toLowerCase();
  if (tag !== undefined && tag !== '' && (tag.length > TAG_MAX_LENGTH || !TAG_PATTERN.test(tag)))
    errors.tag = `must be a tag of 1 to ${TAG_MAX_LENGTH} letters, digits, ".", "_", "+" or "-"`;
  const limit = integer('limit', DEFAULT_LIMIT, 1, MAX_LIMIT);
  const offset = integer('offset', 0, 0, MAX_OFFSET);
  const minRatingText = text('min_rating');
  let minRating: number | undefined;
  if (minRatingText !== undefined) {
    if (/^[0-5](\.\d)?$/.test(minRatingText) && Number(minRatingText) <= 5) minRating = Number(minRatingText);
    else errors.min_rating = 'must be a number from 0 to 5 with at most one decimal';
  }
  const sort = oneOf('sort', CATALOGUE_SORTS) ?? 'newest';

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    query: { status, group, type, q: q || undefined, tag: tag || undefined, minRating, sort, limit, offset },
  };
}

/** `limit` and `offset` with the catalogue's rules; other parameters are not read. */
export function parsePageQuery(raw: Record<string, unknown>): PageQueryResult {
  const parsed = parseListQuery({ limit: raw.limit, offset: raw.offset });
  return parsed.ok ? { ok: true, query: { limit: parsed.query.limit, offset: parsed.query.offset } } : parsed;
}

export type PageQueryResult = { ok: true; query: PageQuery } | { ok: false; errors: Record<string, string> };

/** `limit` and `offset` of a plugin list; malformed ones are a 400 naming each. */
@Injectable()
export class ParsePageQueryPipe implements PipeTransform<Record<string, unknown>, PageQuery> {
  transform(raw: Record<string, unknown>): PageQuery {
    const parsed = parsePageQuery(raw);
    if (!parsed.ok) throw new ApiError(HttpStatus.BAD_REQUEST, 'Invalid query parameters', parsed.errors);
    return parsed.query;
  }
}

/** The catalogue's query string as a ListQuery; a malformed one is a 400 naming each parameter. */
@Injectable()
export class ParseListQueryPipe implements PipeTransform<Record<string, unknown>, ListQuery> {
  transform(raw: Record<string, unknown>): ListQuery {
    const parsed = parseListQuery(raw);
    if (!parsed.ok) throw new ApiError(HttpStatus.BAD_REQUEST, 'Invalid query parameters', parsed.errors);
    return parsed.query;
  }
}
