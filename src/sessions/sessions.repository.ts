import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { PlainReads } from '../database/plain-reads';
import { Transactions } from '../database/transactions';
import { SessionTarget } from './session-target.entity';
import { Session } from './session.entity';

export interface SessionRow {
  id: number;
  name: string;
  active: boolean;
}

/** Every query on `sessions` and `session_targets`. */
@Injectable()
export class SessionsRepository {
  constructor(
    @InjectRepository(Session) private readonly sessions: Repository<Session>,
    @InjectRepository(SessionTarget) private readonly links: Repository<SessionTarget>,
    private readonly transactions: Transactions,
    private readonly reads: PlainReads,
  ) {}

  /**
   * The list is read on every page of a client, so it skips the query builder and entity
   * hydration: three columns by an indexed user_id, as plain rows (booleans come as 0/1
   * from both drivers, ids as strings from some MySQL configurations, hence the conversions).
   */
  async listRows(userId: number, active: boolean | undefined): Promise<SessionRow[]> {
    const byActive = active === undefined ? '' : ' AND active = ?';
    const rows = await this.reads.rows<{ id: number | string; name: string; active: unknown }>(
      `SELECT id, name, active FROM sessions WHERE user_id = ?${byActive} ORDER BY id`,
      active === undefined ? [userId] : [userId, active ? 1 : 0],
    );
    return rows.map((row) => ({ id: Number(row.id), name: row.name, active: Boolean(Number(row.active)) }));
  }

  /** The user's active session, or null when none is. */
  async activeSessionId(
    userId: number,
    manager: EntityManager = this.sessions.manager,
  ): Promise<number | null> {
    const session = await manager.findOne(Session, { where: { userId, active: true }, select: { id: true } });
    return session?.id ?? null;
  }

  findByName(manager: EntityManager, userId: number, name: string): Promise<Session | null> {
    return manager.findOne(Session, { where: { userId, name } });
  }

  /** The id of the session inserted by insertActive. */
  async insertActiveReturningId(
    manager: EntityManager,
    session: Pick<Session, 'userId' | 'name' | 'createdAt'>,
  ): Promise<number> {
    const result = await manager.insert(Session, { ...session, active: true });
    return Number((result.identifiers[0] as { id: number | string }).id);
  }

  /** Whether the target is attached to the session. */
  async holdsTarget(
    sessionId: number,
    targetId: number,
    manager: EntityManager = this.links.manager,
  ): Promise<boolean> {
    return manager.exists(SessionTarget, { where: { sessionId, targetId } });
  }

  findOwned(userId: number, id: number): Promise<Session | null> {
    return this.sessions.findOne({ where: { id, userId } });
  }

  async targetIds(sessionId: number): Promise<number[]> {
    const links = await this.links.find({ where: { sessionId }, order: { targetId: 'ASC' } });
    return links.map((link) => link.targetId);
  }

  /**
   * The transaction that moves a user's active flag. On MySQL it runs READ COMMITTED: the
   * user's row lock already serialises one user's changes, while REPEATABLE READ adds gap
   * locks on `uq_sessions_user_id_name` that span neighbouring users, and two users creating
   * sessions at once deadlocked on them (found by scripts/load-test.ts).
   */
  activeFlagTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.transactions.runIsolated('READ COMMITTED', work);
  }

  async deactivateAll(manager: EntityManager, userId: number): Promise<void> {
    await manager.update(Session, { userId, active: true }, { active: false });
  }

  /** How many sessions the user has (read under the user's row lock, for the cap). */
  countOwned(manager: EntityManager, userId: number): Promise<number> {
    return manager.count(Session, { where: { userId } });
  }

  /** A name the user already has fails with a duplicate-key error (uq_sessions_user_id_name). */
  async insertActive(
    manager: EntityManager,
    session: Pick<Session, 'userId' | 'name' | 'createdAt'>,
  ): Promise<void> {
    await manager.insert(Session, { ...session, active: true });
  }

  async activate(manager: EntityManager, userId: number, id: number): Promise<void> {
    await manager.update(Session, { id, userId }, { active: true });
  }

  /** The foreign keys' cascade removes its target links. */
  async delete(userId: number, id: number): Promise<void> {
    await this.sessions.delete({ id, userId });
  }

  /** Attaching twice fails with a duplicate-key error, a target deleted meanwhile with a foreign-key one. */
  async attachTarget(
    sessionId: number,
    targetId: number,
    manager: EntityManager = this.links.manager,
  ): Promise<void> {
    await manager.insert(SessionTarget, { sessionId, targetId });
  }

  async detachTarget(sessionId: number, targetId: number): Promise<void> {
    await this.links.delete({ sessionId, targetId });
  }
}
