import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/api-error';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { SessionsRepository } from './sessions.repository';

/**
 * The per-user cap on sessions (MAX_SESSIONS_PER_USER): one user must not be able to fill the
 * database or make every list of theirs unbounded. Callers hold the user's row lock, so
 * requests sent at once cannot pass the cap together.
 */
@Injectable()
export class SessionLimits {
  constructor(
    private readonly sessions: SessionsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async ensureRoomForSession(manager: EntityManager, userId: number): Promise<void> {
    const max = this.config.maxSessionsPerUser;
    if ((await this.sessions.countOwned(manager, userId)) >= max) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        `Session limit reached: at most ${max} sessions per user; delete one first`,
      );
    }
  }
}
