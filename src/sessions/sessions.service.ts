import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import type { AuthUser } from '../common/decorators';
import { isMissing, parseId } from '../common/request-params';
import type { SessionDetail, SessionSummary } from './dto/session.dto';
import { isDuplicateKeyError, isForeignKeyError, isIntegrityError } from '../targets/integrity-error';
import { TargetsService } from '../targets/targets.service';
import { SessionTarget } from './session-target.entity';
import { Session } from './session.entity';
import { parseAction, parseSessionName, SESSION_MESSAGES as M } from './session-rules';

export type { SessionDetail, SessionSummary };

/**
 * The path of a session request: `/sessions/[<session_id>[/<action>]]`; the id as ParseIdPipe
 * read it (`null`: it names no session), the action as given.
 */
export interface SessionPath {
  sessionId?: number | null;
  action?: string;
}

const fail = (status: HttpStatus, message: string): ApiError => new ApiError(status, message);

/**
 * The spec's session rules, in its order of checks. A session belongs to its creator:
 * another user's session id is answered exactly like an unknown one.
 */
@Injectable()
export class SessionsService {
  constructor(
    @InjectRepository(Session) private readonly sessions: Repository<Session>,
    @InjectRepository(SessionTarget) private readonly links: Repository<SessionTarget>,
    private readonly targets: TargetsService,
    private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  /** GET: the list (filter `active`) or one session with its target ids. */
  async read(
    user: AuthUser,
    path: SessionPath,
    active: boolean | undefined,
  ): Promise<SessionSummary[] | SessionDetail> {
    if (path.action !== undefined) throw fail(HttpStatus.UNPROCESSABLE_ENTITY, M.actionMustBeNone);
    if (path.sessionId === undefined) return this.list(user.id, active);
    const session = await this.findOwned(user, path.sessionId);
    if (!session) throw fail(HttpStatus.BAD_REQUEST, M.invalidSessionId);
    const links = await this.links.find({ where: { sessionId: session.id }, order: { targetId: 'ASC' } });
    return { ...toSummary(session), targets: links.map((link) => link.targetId) };
  }

  /**
   * The list is read on every page of a client, so it skips the query builder and entity
   * hydration: three columns by an indexed user_id, as plain rows.
   */
  private async list(userId: number, active: boolean | undefined): Promise<SessionSummary[]> {
    const byActive = active === undefined ? '' : ' AND active = ?';
    const rows = (await this.sessions.query(
      `SELECT id, name, active FROM sessions WHERE user_id = ?${byActive} ORDER BY id`,
      active === undefined ? [userId] : [userId, active ? 1 : 0],
    )) as Array<{ id: number | string; name: string; active: unknown }>;
    return rows.map((row) => ({ id: Number(row.id), name: row.name, active: Boolean(Number(row.active)) }));
  }

  /** POST: a new session, which becomes the user's active one. */
  async create(user: AuthUser, path: SessionPath, rawName: string | undefined): Promise<void> {
    if (path.sessionId !== undefined || path.action !== undefined) {
      throw fail(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    }
    const name = parseSessionName(rawName);
    if (name === null) throw fail(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    try {
      await this.activeFlagTransaction(async (manager) => {
        await this.makeNoneActive(manager, user.id);
        await manager.insert(Session, { userId: user.id, name, active: true, createdAt: this.clock.now() });
      });
    } catch (error) {
      // A name the user already has, or a user deleted meanwhile.
      if (isIntegrityError(error)) throw fail(HttpStatus.BAD_REQUEST, M.databaseFailure);
      throw error;
    }
  }

  /** PATCH: `activate`, or `add` / `remove` a target given by `target_id`. */
  async change(user: AuthUser, path: SessionPath, rawTargetId: string | undefined): Promise<void> {
    if (path.sessionId === undefined) throw fail(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    const session = await this.findOwned(user, path.sessionId);
    if (!session) throw fail(HttpStatus.BAD_REQUEST, M.invalidParameterType);
    const action = parseAction(path.action);
    if (action === null) throw fail(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    if (action === 'activate') {
      await this.activeFlagTransaction(async (manager) => {
        await this.makeNoneActive(manager, user.id);
        await manager.update(Session, { id: session.id, userId: user.id }, { active: true });
      });
      return;
    }
    if (isMissing(rawTargetId)) throw fail(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    const targetId = parseId(rawTargetId);
    const target = targetId === null ? null : await this.targets.findOwned(user.id, targetId);
    if (!target) throw fail(HttpStatus.BAD_REQUEST, M.invalidTargetReference);
    if (action === 'remove') {
      await this.links.delete({ sessionId: session.id, targetId: target.id });
      return;
    }
    try {
      await this.links.insert({ sessionId: session.id, targetId: target.id });
    } catch (error) {
      if (isDuplicateKeyError(error)) return; // attached already: adding twice is harmless
      if (isForeignKeyError(error)) throw fail(HttpStatus.BAD_REQUEST, M.invalidTargetReference);
      throw error;
    }
  }

  /** DELETE: the session and its target links; none of the user's sessions is active afterwards if it was. */
  async remove(user: AuthUser, path: SessionPath): Promise<void> {
    if (path.sessionId === undefined || path.action !== undefined) {
      throw fail(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    }
    const session = await this.findOwned(user, path.sessionId);
    if (!session) throw fail(HttpStatus.BAD_REQUEST, M.invalidSessionId);
    await this.sessions.delete({ id: session.id, userId: user.id });
  }

  /** A malformed id, an unknown one and another user's all come back as null. */
  private async findOwned(user: AuthUser, id: number | null): Promise<Session | null> {
    return id === null ? null : this.sessions.findOne({ where: { id, userId: user.id } });
  }

  /**
   * The transaction that moves a user's active flag. On MySQL it runs READ COMMITTED: the
   * user's row lock (makeNoneActive) already serialises one user's changes, while REPEATABLE
   * READ adds gap locks on `uq_sessions_user_id_name` that span neighbouring users, and two
   * users creating sessions at once deadlocked on them (found by scripts/load-test.ts).
   */
  private activeFlagTransaction(work: (manager: EntityManager) => Promise<void>): Promise<void> {
    return this.dataSource.options.type === 'mysql'
      ? this.dataSource.transaction('READ COMMITTED', work)
      : this.dataSource.transaction(work);
  }

  /**
   * Clears the user's active flag inside a transaction that sets a new one. On MySQL the
   * user's row is locked first, so two requests of one user cannot both leave a session
   * active; SQLite has a single writer anyway.
   */
  private async makeNoneActive(manager: EntityManager, userId: number): Promise<void> {
    if (this.dataSource.options.type === 'mysql') {
      await manager.query('SELECT id FROM users WHERE id = ? FOR UPDATE', [userId]);
    }
    await manager.update(Session, { userId, active: true }, { active: false });
  }
}

function toSummary(session: Session): SessionSummary {
  return { id: session.id, name: session.name, active: session.active };
}
