import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { containsPattern, LIKE_ESCAPE } from '../database/like';
import { Target } from './target.entity';

/** A page of one user's targets, each filter optional; the URL is compared by its hash. */
export interface TargetFilter {
  /** Only these targets (a session's); an empty list matches none. */
  ids?: readonly number[];
  targetUrlHash?: string;
  hostName?: string;
  search?: string;
  /** At most this many rows (MAX_LIMIT when the client asked for all). */
  limit: number;
  offset: number;
}

/** Every query on `targets`. */
@Injectable()
export class TargetsRepository {
  constructor(@InjectRepository(Target) private readonly targets: Repository<Target>) {}

  /** Saves the target, filling in its id; a URL the user has already fails with a duplicate-key error. */
  async insert(values: Omit<Target, 'id'>, manager: EntityManager = this.targets.manager): Promise<Target> {
    const target = this.targets.create(values);
    await manager.save(target);
    return target;
  }

  /** How many targets the user has (read under the user's row lock, for the cap). */
  countOwned(userId: number, manager: EntityManager): Promise<number> {
    return manager.count(Target, { where: { userId } });
  }

  findOwnedByUrlHash(userId: number, targetUrlHash: string, manager: EntityManager = this.targets.manager) {
    return manager.findOne(Target, { where: { userId, targetUrlHash } });
  }

  async page(userId: number, filter: TargetFilter): Promise<{ rows: Target[]; total: number }> {
    if (filter.ids !== undefined && filter.ids.length === 0) return { rows: [], total: 0 };
    const builder = this.targets.createQueryBuilder('target').where('target.user_id = :userId', { userId });
    if (filter.ids !== undefined) builder.andWhere('target.id IN (:...ids)', { ids: filter.ids });
    if (filter.targetUrlHash !== undefined) {
      builder.andWhere('target.target_url_hash = :hash', { hash: filter.targetUrlHash });
    }
    if (filter.hostName !== undefined) {
      builder.andWhere('target.host_name = :hostName', { hostName: filter.hostName });
    }
    if (filter.search !== undefined) {
      builder.andWhere(`target.target_url LIKE :pattern ESCAPE '${LIKE_ESCAPE}'`, {
        pattern: containsPattern(filter.search),
      });
    }
    const [rows, total] = await builder
      .orderBy('target.id', 'ASC')
      .skip(filter.offset)
      .take(filter.limit)
      .getManyAndCount();
    return { rows, total };
  }

  findOwned(userId: number, id: number): Promise<Target | null> {
    return this.targets.findOne({ where: { id, userId } });
  }

  /** True when the user's target was there to delete; the foreign keys detach it from every session. */
  async deleteOwned(userId: number, id: number): Promise<boolean> {
    const result = await this.targets.delete({ id, userId });
    return Boolean(result.affected);
  }
}
