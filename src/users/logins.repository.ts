import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { UserLoginToken } from './user-login-token.entity';
import { User } from './user.entity';

/** How often a login's `last_used_at` is written at most: a busy login costs no write per request. */
export const LOGIN_LAST_USED_RESOLUTION_MS = 60_000;

/** A live login as its owner sees it; `current` is the one the request came with. */
export interface LoginRecord {
  id: number;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date;
  clientAddress: string | null;
  userAgent: string | null;
  current: boolean;
}

/**
 * The logins (`user_login_tokens`) as their owner lists and ends them; recording and the
 * guard's lookup are in UsersRepository. A login is live while unexpired and of its user's
 * credential generation: the others are refused by the guard and listed nowhere.
 */
@Injectable()
export class LoginsRepository {
  private readonly logger = new Logger('Logins');

  constructor(@InjectRepository(UserLoginToken) private readonly tokens: Repository<UserLoginToken>) {}

  /**
   * Notes a use of login `id` whose `last_used_at` read `lastUsed` (as the driver gave it),
   * at most once a minute: a conditional UPDATE that the request neither waits for nor fails
   * on (uses at once write once; a failed write only leaves the time older).
   */
  noteUse(id: number, lastUsed: unknown, now: Date): void {
    const since = now.getTime() - LOGIN_LAST_USED_RESOLUTION_MS;
    if (lastUsed !== null && lastUsed !== undefined && this.timeOf(lastUsed) > since) return;
    this.tokens
      .createQueryBuilder()
      .update(UserLoginToken)
      .set({ lastUsedAt: now })
      .where('id = :id', { id })
      .andWhere('(last_used_at IS NULL OR last_used_at < :since)', { since: new Date(since) })
      .execute()
      .catch((error: unknown) =>
        this.logger.debug(`last_used_at of login ${id} not written: ${(error as Error).message}`),
      );
  }

  /** The user's live logins, newest first. */
  async live(userId: number, now: Date, currentHash: string): Promise<LoginRecord[]> {
    const rows = await this.liveQuery(this.tokens.manager, userId, now).orderBy('token.id', 'DESC').getMany();
    return rows.map((row) => ({
      id: row.id,
      createdAt: row.createdAt,
      lastUsedAt: row.lastUsedAt,
      expiresAt: row.expiresAt,
      clientAddress: row.clientAddress,
      userAgent: row.userAgent,
      current: row.tokenHash === currentHash,
    }));
  }

  /** Ends the user's live login `id`, in the caller's transaction: false when there is none. */
  async end(manager: EntityManager, userId: number, id: number, now: Date): Promise<boolean> {
    const found = await this.liveQuery(manager, userId, now).andWhere('token.id = :id', { id }).getExists();
    if (!found) return false;
    const { affected } = await manager.delete(UserLoginToken, { id, userId });
    return Boolean(affected);
  }

  /** Ends every login of the user but the one whose hash is `keptHash`: how many rows went. */
  async endAllBut(manager: EntityManager, userId: number, keptHash: string): Promise<number> {
    const { affected } = await manager
      .createQueryBuilder()
      .delete()
      .from(UserLoginToken)
      .where('user_id = :userId AND token_hash <> :keptHash', { userId, keptHash })
      .execute();
    return affected ?? 0;
  }

  /** Moves the login of `tokenHash` to `generation`: it lives on after a change that raised it. */
  async keep(manager: EntityManager, userId: number, tokenHash: string, generation: number): Promise<void> {
    await manager.update(UserLoginToken, { userId, tokenHash }, { credentialGeneration: generation });
  }

  private liveQuery(manager: EntityManager, userId: number, now: Date) {
    return manager
      .createQueryBuilder(UserLoginToken, 'token')
      .innerJoin(User, 'user', 'user.id = token.user_id')
      .where('token.user_id = :userId', { userId })
      .andWhere('token.credential_generation = user.credential_generation')
      .andWhere('token.expires_at > :now', { now });
  }

  /** A datetime as either driver returns it in a plain row (SQLite's UTC text, MySQL's Date). */
  private timeOf(value: unknown): number {
    if (value instanceof Date) return value.getTime();
    const text = String(value);
    return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(' ', 'T')}Z`);
  }
}
