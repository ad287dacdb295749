import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { createHash } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { isDuplicateKeyError } from '../database/integrity-error';
import { normalizeHostName, parseTargetUrl, ParsedTargetUrl } from './target-url';
import type { EntityManager } from 'typeorm';
import { SessionLimits } from '../sessions/session-limits';
import { SessionsRepository } from '../sessions/sessions.repository';
import { UsersRepository } from '../users/users.repository';
import type { TargetView } from './dto/target.dto';
import { Target, toTargetView } from './target.entity';
import { TargetsRepository } from './targets.repository';

export interface TargetQuery {
  targetUrl?: string;
  hostName?: string;
  search?: string;
  /** At most MAX_LIMIT (the page size cap: a client asking for all gets that many). */
  limit: number;
  offset: number;
}

/** The session a new target joins when the user has none active, as the original framework names it. */
export const DEFAULT_SESSION_NAME = 'default session';

export const TARGET_NOT_FOUND = 'Target not found';
export const TARGET_EXISTS = 'Target already exists';

const hashUrl = (url: string): string => createHash('sha256').update(url).digest('hex');

@Injectable()
export class TargetsService {
  constructor(
    private readonly targets: TargetsRepository,
    private readonly sessions: SessionsRepository,
    private readonly users: UsersRepository,
    private readonly clock: Clock,
    private readonly sessionLimits: SessionLimits,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A new target joins the user's active session, as in the original framework, whose web
   * client lists the active session's targets. Without an active session, the session named
   * `default session` is activated (made if missing). A URL the user already has joins the
   * session too; only a URL already in the active session is a 409. All in one transaction
   * behind the user's row lock, so a session change or a twin request cannot interleave.
   */
  async create(userId: number, parsed: ParsedTargetUrl, scope: boolean): Promise<TargetView> {
    const targetUrlHash = hashUrl(parsed.targetUrl);
    try {
      const target = await this.sessions.activeFlagTransaction(async (manager) => {
        await this.users.lockUser(manager, userId);
        const sessionId = await this.activeSessionFor(manager, userId);
        const existing = await this.targets.findOwnedByUrlHash(userId, targetUrlHash, manager);
        if (existing && (await this.sessions.holdsTarget(sessionId, existing.id, manager))) {
          throw new ApiError(HttpStatus.CONFLICT, TARGET_EXISTS);
        }
        if (!existing) await this.ensureRoomForTarget(manager, userId);
        const joining =
          existing ??
          (await this.targets.insert(
            { userId, ...parsed, targetUrlHash, scope, createdAt: this.clock.now() },
            manager,
          ));
        await this.sessions.attachTarget(sessionId, joining.id, manager);
        return joining;
      });
      return toTargetView(target);
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new ApiError(HttpStatus.CONFLICT, TARGET_EXISTS);
      throw error;
    }
  }

  /** MAX_TARGETS_PER_USER, counted behind the user's row lock so requests at once cannot pass it. */
  private async ensureRoomForTarget(manager: EntityManager, userId: number): Promise<void> {
    const max = this.config.maxTargetsPerUser;
    if ((await this.targets.countOwned(userId, manager)) >= max) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        `Target limit reached: at most ${max} targets per user; delete one first`,
      );
    }
  }

  /** The active session, else `default session` activated, else a new `default session`. */
  private async activeSessionFor(manager: EntityManager, userId: number): Promise<number> {
    const active = await this.sessions.activeSessionId(userId, manager);
    if (active !== null) return active;
    const named = await this.sessions.findByName(manager, userId, DEFAULT_SESSION_NAME);
    if (named) {
      await this.sessions.activate(manager, userId, named.id);
      return named.id;
    }
    await this.sessionLimits.ensureRoomForSession(manager, userId);
    return this.sessions.insertActiveReturningId(manager, {
      userId,
      name: DEFAULT_SESSION_NAME,
      createdAt: this.clock.now(),
    });
  }

  /** The targets of the user's active session (none without one), filtered and paged. */
  async listOfActiveSession(
    userId: number,
    query: TargetQuery,
  ): Promise<{ total: number; targets: TargetView[] }> {
    const sessionId = await this.sessions.activeSessionId(userId);
    if (sessionId === null) return { total: 0, targets: [] };
    const ids = await this.sessions.targetIds(sessionId);
    // Compared in normal form, so `http://Example.com` finds `http://example.com/`.
    const normalized =
      query.targetUrl === undefined
        ? undefined
        : (parseTargetUrl(query.targetUrl)?.targetUrl ?? query.targetUrl);
    const { rows, total } = await this.targets.page(userId, {
      ids,
      targetUrlHash: normalized === undefined ? undefined : hashUrl(normalized),
      hostName: query.hostName === undefined ? undefined : normalizeHostName(query.hostName),
      search: query.search,
      limit: query.limit,
      offset: query.offset,
    });
    return { total, targets: rows.map(toTargetView) };
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
