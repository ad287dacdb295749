import { HttpStatus, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { AuditLog } from '../audit/audit-log.service';
import { hashToken } from '../auth/bearer-token';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import type { AuthUser } from '../common/decorators';
import { Transactions } from '../database/transactions';
import { ACCESS_TOKEN_PREFIX, type AccessScope, TOKEN_SCOPES } from '../common/access-scopes';
import type { AccessToken } from '../users/access-token.entity';
import { AccessTokensRepository, formatScopes, parseScopes } from '../users/access-tokens.repository';
import { UsersRepository } from '../users/users.repository';
import { UsersService } from '../users/users.service';
import type { AccessTokenView, NewAccessTokenArgs, NewAccessTokenView } from './dto/access-token.dto';

export const MAX_TOKENS_PER_USER = 50;
const DEFAULT_DAYS = 90;
const MAX_DAYS = 365;
const MAX_NAME_LENGTH = 100;
const DAY_MS = 86_400_000;

export const TOKEN_MESSAGES = {
  name: `Token name must be 1 to ${MAX_NAME_LENGTH} characters`,
  scopes: 'Scopes must be one or more of read, upload, review',
  days: `expires_in_days must be an integer from 1 to ${MAX_DAYS}`,
  review: 'Only an admin may give a token the review scope',
  limit: `Token limit reached: at most ${MAX_TOKENS_PER_USER} tokens per user; revoke one first`,
  notFound: 'Token not found',
} as const;

const bad = (message: string) => new ApiError(HttpStatus.BAD_REQUEST, message);

/**
 * Personal access tokens: made and revoked by their owner signed in with a password login
 * (the guard refuses a token here), each bound to the credential generation of that login, so
 * a change of credentials ends them as it ends JWTs. Both are audit entries.
 */
@Injectable()
export class AccessTokensService {
  constructor(
    private readonly tokens: AccessTokensRepository,
    private readonly users: UsersRepository,
    private readonly usersService: UsersService,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  async create(caller: AuthUser, args: NewAccessTokenArgs): Promise<NewAccessTokenView> {
    const name = args.name?.trim() ?? '';
    if (name.length < 1 || name.length > MAX_NAME_LENGTH) throw bad(TOKEN_MESSAGES.name);
    const scopes = scopesOf(args.scopes);
    if (!scopes) throw bad(TOKEN_MESSAGES.scopes);
    const days = daysOf(args.expires_in_days);
    if (days === null) throw bad(TOKEN_MESSAGES.days);
    const secret = ACCESS_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const token = await this.transactions.run(async (manager) => {
      // Behind the user's row lock: a change of credentials either committed before (the
      // caller's login is gone: 401) or waits and then ends this token with the others.
      await this.users.lockUser(manager, caller.id);
      const user = await this.users.findById(caller.id, manager);
      const login = await this.users.loginGeneration(manager, caller.tokenHash);
      if (!user || login !== user.credentialGeneration)
        throw new ApiError(HttpStatus.UNAUTHORIZED, 'Unauthorized');
      // The role held now, read under the lock.
      if (scopes.has('review') && !this.usersService.isAdmin(user)) {
        throw new ApiError(HttpStatus.FORBIDDEN, TOKEN_MESSAGES.review);
      }
      if ((await this.tokens.live(caller.id, now, manager)).length >= MAX_TOKENS_PER_USER) {
        throw new ApiError(HttpStatus.CONFLICT, TOKEN_MESSAGES.limit);
      }
      const record = {
        userId: caller.id,
        name,
        tokenHash: hashToken(secret),
        scopes: formatScopes(scopes),
        createdAt: now,
        expiresAt: new Date(now.getTime() + days * DAY_MS),
        lastUsedAt: null,
        credentialGeneration: user.credentialGeneration,
      };
      const id = await this.tokens.insert(manager, record);
      await this.audit.append(manager, {
        actor: 'user',
        actorUserId: caller.id,
        action: 'token_create',
        subject: `user:${caller.id}`,
        details: { token_id: id, name, scopes: record.scopes, expires_at: record.expiresAt.toISOString() },
      });
      return { id, ...record };
    });
    return { ...view(token), token: secret };
  }

  async list(userId: number): Promise<AccessTokenView[]> {
    return (await this.tokens.live(userId, this.clock.now())).map(view);
  }

  async revoke(userId: number, id: number | null): Promise<void> {
    const revoked =
      id !== null &&
      (await this.transactions.run(async (manager) => {
        const token = await this.tokens.revoke(manager, userId, id);
        if (!token) return false;
        await this.audit.append(manager, {
          actor: 'user',
          actorUserId: userId,
          action: 'token_revoke',
          subject: `user:${userId}`,
          details: { token_id: id, name: token.name },
        });
        return true;
      }));
    if (!revoked) throw new ApiError(HttpStatus.NOT_FOUND, TOKEN_MESSAGES.notFound);
  }
}

/** Each value a scope or a comma-separated list of them; null for none or an unknown one. */
function scopesOf(values: string[]): Set<AccessScope> | null {
  const named = values.flatMap((value) => value.split(',')).map((scope) => scope.trim());
  if (named.length === 0 || named.some((scope) => !(TOKEN_SCOPES as readonly string[]).includes(scope))) {
    return null;
  }
  return new Set(named as AccessScope[]);
}

function daysOf(text: string | undefined): number | null {
  if (text === undefined || text === '') return DEFAULT_DAYS;
  if (!/^\d{1,3}$/.test(text.trim())) return null;
  const days = Number(text.trim());
  return days >= 1 && days <= MAX_DAYS ? days : null;
}

function view(token: Omit<AccessToken, 'user'>): AccessTokenView {
  return {
    id: token.id,
    name: token.name,
    scopes: parseScopes(token.scopes),
    created_at: token.createdAt.toISOString(),
    expires_at: token.expiresAt.toISOString(),
    last_used_at: token.lastUsedAt?.toISOString() ?? null,
  };
}
