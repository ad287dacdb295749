import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { isDuplicateKeyError } from './integrity-error';
import { normalizeHostName, parseTargetUrl, ParsedTargetUrl } from './target-url';
import type { TargetPage, TargetView } from './dto/target.dto';
import { Target, toTargetView } from './target.entity';

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

/** LIKE with `!` as its escape character, which reads the same on SQLite and MySQL. */
const likePattern = (text: string): string => `%${text.replace(/[!%_]/g, (character) => `!${character}`)}%`;

@Injectable()
export class TargetsService {
  constructor(
    @InjectRepository(Target) private readonly targets: Repository<Target>,
    private readonly clock: Clock,
  ) {}

  async create(userId: number, parsed: ParsedTargetUrl, scope: boolean): Promise<TargetView> {
    const target = this.targets.create({
      userId,
      ...parsed,
      targetUrlHash: hashUrl(parsed.targetUrl),
      scope,
      createdAt: this.clock.now(),
    });
    try {
      await this.targets.save(target);
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new ApiError(HttpStatus.CONFLICT, 'Target already exists');
      throw error;
    }
    return toTargetView(target);
  }

  async list(userId: number, query: TargetQuery): Promise<TargetPage> {
    const builder = this.targets.createQueryBuilder('target').where('target.user_id = :userId', { userId });
    if (query.targetUrl !== undefined) {
      // Compared in normal form, so `http://Example.com` finds `http://example.com/`.
      const normalized = parseTargetUrl(query.targetUrl)?.targetUrl ?? query.targetUrl;
      builder.andWhere('target.target_url_hash = :hash', { hash: hashUrl(normalized) });
    }
    if (query.hostName !== undefined) {
      builder.andWhere('target.host_name = :hostName', { hostName: normalizeHostName(query.hostName) });
    }
    if (query.search !== undefined) {
      builder.andWhere("target.target_url LIKE :pattern ESCAPE '!'", { pattern: likePattern(query.search) });
    }
    const [rows, total] = await builder
      .orderBy('target.id', 'ASC')
      .skip(query.offset)
      .take(query.limit)
      .getManyAndCount();
    return { total, limit: query.limit, offset: query.offset, targets: rows.map(toTargetView) };
  }

  /** A target of this user; another user's target is as absent as an unknown one. */
  findOwned(userId: number, id: number): Promise<Target | null> {
    return this.targets.findOne({ where: { id, userId } });
  }

  async get(userId: number, id: number | null): Promise<TargetView> {
    const target = id === null ? null : await this.findOwned(userId, id);
    if (!target) throw new ApiError(HttpStatus.NOT_FOUND, TARGET_NOT_FOUND);
    return toTargetView(target);
  }

  /** The foreign key cascade removes the target from every session that held it. */
  async remove(userId: number, id: number | null): Promise<void> {
    const result = id === null ? null : await this.targets.delete({ id, userId });
    if (!result?.affected) throw new ApiError(HttpStatus.NOT_FOUND, TARGET_NOT_FOUND);
  }
}
