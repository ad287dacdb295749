import { HttpStatus, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import type { AuthUser } from '../common/decorators';
import { isMissing, parseId } from '../common/request-params';
import type { SessionDetail, SessionSummary } from './dto/session.dto';
import { isDuplicateKeyError, isForeignKeyError, isIntegrityError } from '../database/integrity-error';
import { TargetsService } from '../targets/targets.service';
import { UsersRepository } from '../users/users.repository';
import type { Session } from './session.entity';
import { SessionLimits } from './session-limits';
import { SessionsRepository } from './sessions.repository';
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
    private readonly sessions: SessionsRepository,
    private readonly targets: TargetsService,
    private readonly users: UsersRepository,
    private readonly clock: Clock,
    private readonly sessionLimits: SessionLimits,
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
    return { ...toSummary(session), targets: await this.sessions.targetIds(session.id) };
  }

  private list(userId: number, active: boolean | undefined): Promise<SessionSummary[]> {
    return this.sessions.listRows(userId, active);
  }

  /** POST: a new session, which becomes the user's active one. */
  async create(user: AuthUser, path: SessionPath, rawName: string | undefined): Promise<void> {
    if (path.sessionId !== undefined || path.action !== undefined) {
      throw fail(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    }
    const name = parseSessionName(rawName);
    if (name === null) throw fail(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    try {
      await this.sessions.activeFlagTransaction(async (manager) => {
        await this.makeNoneActive(manager, user.id);
        // Counted behind the user's row lock, so requests sent at once cannot pass the cap.
        await this.sessionLimits.ensureRoomForSession(manager, user.id);
        await this.sessions.insertActive(manager, { userId: user.id, name, createdAt: this.clock.now() });
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
      await this.sessions.activeFlagTransaction(async (manager) => {
        await this.makeNoneActive(manager, user.id);
        await this.sessions.activate(manager, user.id, session.id);
      });
      return;
    }
    if (isMissing(rawTargetId)) throw fail(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    const targetId = parseId(rawTargetId);
    const target = targetId === null ? null : await this.targets.findOwned(user.id, targetId);
    if (!target) throw fail(HttpStatus.BAD_REQUEST, M.invalidTargetReference);
    if (action === 'remove') {
      await this.sessions.detachTarget(session.id, target.id);
      return;
    }
    try {
      await this.sessions.attachTarget(session.id, target.id);
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
    await this.sessions.delete(user.id, session.id);
  }

  /** A malformed id, an unknown one and another user's all come back as null. */
  private async findOwned(user: AuthUser, id: number | null): Promise<Session | null> {
    return id === null ? null : this.sessions.findOwned(user.id, id);
  }

  /**
   * Clears the user's active flag inside a transaction that sets a new one. The user's row
   * is locked first, so two requests of one user cannot both leave a session active.
   */
  private async makeNoneActive(manager: EntityManager, userId: number): Promise<void> {
    await this.users.lockUser(manager, userId);
    await this.sessions.deactivateAll(manager, userId);
  }
}

function toSummary(session: Session): SessionSummary {
  return { id: session.id, name: session.name, active: session.active };
}
