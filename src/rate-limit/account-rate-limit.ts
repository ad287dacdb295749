import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Inject,
  Injectable,
  NestInterceptor,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest as Request } from 'fastify';
import { createHash } from 'node:crypto';
import { Observable, tap } from 'rxjs';
import { identityKey } from '../users/identity-key';
import { UsersService } from '../users/users.service';
import type { AccountResponse } from '../common/envelopes';
import { readParam } from '../common/request-params';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Limit, RateLimiter, Taken } from './rate-limiter';

const MINUTE_MS = 60_000;

/** Requests per client address, per route. */
export const ADDRESS_LIMIT: Limit = { limit: 30, windowMs: MINUTE_MS };
/** Requests per account, per route, where a request sends mail or makes an account. */
export const ACCOUNT_REQUEST_LIMIT: Limit = { limit: 10, windowMs: 15 * MINUTE_MS };
/** Failed guesses (password or OTP) at one account from one address, all routes together. */
export const PAIR_FAILURE_LIMIT: Limit = { limit: 10, windowMs: 15 * MINUTE_MS };
/** Failed guesses at one account from everywhere: the ASVS bound of 100 an hour. */
export const ACCOUNT_FAILURE_LIMIT: Limit = { limit: 100, windowMs: 60 * MINUTE_MS };

export interface AccountLimitPolicy {
  /** Names the route in the keys of its per-route counters. */
  route: string;
  /** The request argument that names the account. */
  identifier: 'emailOrUsername' | 'email';
  /**
   * Answers that are failed guesses: such routes are limited by failures per account and
   * address and per account, so a stranger's guesses do not lock the owner out. Without
   * them every request counts against the account.
   */
  failures?: readonly string[];
}

const POLICY = Symbol('account-limit-policy');

/** Limits an account endpoint per client address and per the account its identifier names. */
export const AccountRateLimit = (policy: AccountLimitPolicy) =>
  applyDecorators(SetMetadata(POLICY, policy), UseInterceptors(AccountRateLimitInterceptor));

/**
 * Counts are taken before the handler runs, so requests sent at once cannot overrun a limit;
 * a reserved failure is handed back when the answer turns out not to be one. Keys name the
 * account the identifier resolves to (any spelling of its email or name shares one budget),
 * or for an unknown identifier its normalised text.
 */
@Injectable()
export class AccountRateLimitInterceptor implements NestInterceptor {
  constructor(
    private readonly limiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersService,
    private readonly reflector: Reflector,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const policy = this.reflector.get<AccountLimitPolicy | undefined>(POLICY, context.getHandler());
    if (!this.config.rateLimit || !policy) return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    const address = request.ip ?? 'unknown';
    const reserved = await this.reserve(policy, request, address);
    if (reserved.length === 0) return next.handle();
    // An answer is already on its way: a count that cannot be handed back stays taken.
    const release = () =>
      void Promise.all(reserved.map((taken) => this.limiter.giveBack(taken))).catch(() => undefined);
    return next.handle().pipe(
      tap({
        next: (body) => {
          if (!isFailure(body as AccountResponse, policy.failures)) release();
        },
        error: release,
      }),
    );
  }

  /** Takes every hit the request needs; refuses past a limit. Returns the failure hits to hand back. */
  private async reserve(policy: AccountLimitPolicy, request: Request, address: string): Promise<Taken[]> {
    await this.limiter.take(`addr:${policy.route}:${address}`, ADDRESS_LIMIT);
    const account = await this.accountKey(policy, request);
    if (account === null) return [];
    if (!policy.failures) {
      await this.limiter.take(`req:${policy.route}:${account}`, ACCOUNT_REQUEST_LIMIT);
      return [];
    }
    const pair = await this.limiter.take(`fail:${account}:${address}`, PAIR_FAILURE_LIMIT);
    try {
      return [pair, await this.limiter.take(`fail:${account}`, ACCOUNT_FAILURE_LIMIT)];
    } catch (error) {
      await this.limiter.giveBack(pair);
      throw error;
    }
  }

  private async accountKey(policy: AccountLimitPolicy, request: Request): Promise<string | null> {
    const identifier = readParam(request, policy.identifier);
    if (!identifier) return null;
    const user =
      policy.identifier === 'email'
        ? await this.users.findByEmail(identifier)
        : await this.users.findByEmailOrName(identifier);
    if (user) return `user:${user.id}`;
    // Hashed, so a huge identifier makes a short key.
    return `text:${createHash('sha256').update(identityKey(identifier)).digest('base64url')}`;
  }
}

function isFailure(body: AccountResponse | undefined, failures: readonly string[] | undefined): boolean {
  return (
    body?.status === 'fail' && typeof body.message === 'string' && (failures ?? []).includes(body.message)
  );
}
