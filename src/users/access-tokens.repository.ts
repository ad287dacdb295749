import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, LessThan, MoreThan, type Repository } from 'typeorm';
import { type AccessScope, TOKEN_SCOPES } from '../common/access-scopes';
import { AccessToken } from './access-token.entity';
import type { TokenOwner } from './users.repository';

/** The owner of a personal access token, as the guard reads it, with what the token may do. */
export interface AccessTokenOwner extends TokenOwner {
  tokenId: number;
  scopes: AccessScope[];
  lastUsedAt: Date | null;
}

/** How often a token's `last_used_at` is written at most: a busy token costs no write per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Every query of the personal access tokens (see UsersRepository for the users themselves). */
@Injectable()
export class AccessTokensRepository {
  constructor(@InjectRepository(AccessToken) private readonly tokens: Repository<AccessToken>) {}

  /** The user's tokens that have not expired, newest first. */
  live(userId: number, now: Date, manager: EntityManager = this.tokens.manager): Promise<AccessToken[]> {
    return manager.find(AccessToken, {
      where: { userId, expiresAt: MoreThan(now) },
      order: { id: 'DESC' },
    });
  }

  /** Records a token; the expired ones of its user are swept first. In the caller's transaction. */
  async insert(manager: EntityManager, record: Omit<AccessToken, 'id' | 'user'>): Promise<number> {
    await manager.delete(AccessToken, { userId: record.userId, expiresAt: LessThan(record.createdAt) });
    const result = await manager.insert(AccessToken, record);
    return Number((result.identifiers[0] as { id: unknown }).id);
  }

  /** Deletes the user's token `id` and returns it; null when the user has no such token. */
  async revoke(manager: EntityManager, userId: number, id: number): Promise<AccessToken | null> {
    const token = await manager.findOneBy(AccessToken, { id, userId });
    if (!token) return null;
    const { affected } = await manager.delete(AccessToken, { id, userId });
    return affected ? token : null;
  }

  /** Deletes every token of the user, in the caller's transaction: how many there were. */
  async deleteAll(manager: EntityManager, userId: number): Promise<number> {
    return (await manager.delete(AccessToken, { userId })).affected ?? 0;
  }

  /**
   * The guard's lookup: the unique hash, with its user by primary key. A token past its expiry,
   * or of an older credential generation than its user's, names no owner.
   */
  async findOwner(tokenHash: string, now: Date): Promise<AccessTokenOwner | null> {
    const token = await this.tokens.findOne({ where: { tokenHash }, relations: { user: true } });
    const user = token?.user;
    if (!token || !user) return null;
    if (token.expiresAt.getTime() <= now.getTime()) return null;
    if (token.credentialGeneration !== user.credentialGeneration) return null;
    return {
      tokenId: token.id,
      userId: user.id,
      scopes: parseScopes(token.scopes),
      lastUsedAt: token.lastUsedAt,
      name: user.name,
      email: user.email,
      isActive: user.isActive && user.deactivatedAt === null,
      isAdmin: user.isAdmin,
    };
  }

  /** Notes a use, at most once a minute per token (a conditional write: uses at once write once). */
  async touch(owner: AccessTokenOwner, now: Date): Promise<void> {
    if (owner.lastUsedAt && owner.lastUsedAt.getTime() > now.getTime() - LAST_USED_RESOLUTION_MS) return;
    await this.tokens
      .createQueryBuilder()
      .update(AccessToken)
      .set({ lastUsedAt: now })
      .where('id = :id', { id: owner.tokenId })
      .andWhere('(last_used_at IS NULL OR last_used_at < :since)', {
        since: new Date(now.getTime() - LAST_USED_RESOLUTION_MS),
      })
      .execute();
  }
}

/** The stored form of scopes: TOKEN_SCOPES order, comma-separated. */
export function formatScopes(scopes: ReadonlySet<AccessScope>): string {
  return TOKEN_SCOPES.filter((scope) => scopes.has(scope)).join(',');
}

export function parseScopes(stored: string): AccessScope[] {
  const named = new Set(stored.split(','));
  return TOKEN_SCOPES.filter((scope) => named.has(scope));
}
