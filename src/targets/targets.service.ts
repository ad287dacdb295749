import { HttpStatus, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { isDuplicateKeyError } from '../database/integrity-error';
import { normalizeHostName, parseTargetUrl, ParsedTargetUrl } from './target-url';
import type { TargetPage, TargetView } from './dto/target.dto';
import { Target, toTargetView } from './target.entity';
import { TargetsRepository } from './targets.repository';

export interface TargetQuery {
  targetUrl?: string;
  hostName?: string;
  search?: string;
  limit: number;
  offset: number;
}

export type { TargetPage };

export const TARGET_NOT_FOUND = 'Target not found';

const hashUrl = (url: string): string => createHash('sha256').update(url).digest('hex');

@Injectable()
export class TargetsService {
  constructor(
    private readonly targets: TargetsRepository,
    private readonly clock: Clock,
  ) {}

  async create(userId: number, parsed: ParsedTargetUrl, scope: boolean): Promise<TargetView> {
    try {
      const target = await this.targets.insert({
        userId,
        ...parsed,
        targetUrlHash: hashUrl(parsed.targetUrl),
        scope,
        createdAt: this.clock.now(),
      });
      return toTargetView(target);
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new ApiError(HttpStatus.CONFLICT, 'Target already exists');
      throw error;
    }
  }

  async list(userId: number, query: TargetQuery): Promise<TargetPage> {
    // Compared in normal form, so `http://Example.com` finds `http://example.com/`.
    const normalized =
      query.targetUrl === undefined
        ? undefined
        : (parseTargetUrl(query.targetUrl)?.targetUrl ?? query.targetUrl);
    const { rows, total } = await this.targets.page(userId, {
      targetUrlHash: normalized === undefined ? undefined : hashUrl(normalized),
      hostName: query.hostName === undefined ? undefined : normalizeHostName(query.hostName),
      search: query.search,
      limit: query.limit,
      offset: query.offset,
    });
    return { total, limit: query.limit, offset: query.offset, targets: rows.map(toTargetView) };
  }

  /** A target of this user; another user's target is as absent as an unknown one. */
  findOwned(userId: number, id: number): Promise<Target | null> {
    return this.targets.findOwned(userId, id);
  }

  async get(userId: number, id: number | null): Promise<TargetView> {
    const target = id === null ? null : await this.findOwned(userId, id);
    if (!target) throw new ApiError(HttpStatus.NOT_FOUND, TARGET_NOT_FOUND);
    return toTargetView(target);
  }

  /** The foreign key cascade removes the target from every session that held it. */
  async remove(userId: number, id: number | null): Promise<void> {
    const deleted = id === null ? false : await this.targets.deleteOwned(userId, id);
    if (!deleted) throw new ApiError(HttpStatus.NOT_FOUND, TARGET_NOT_FOUND);
  }
}
