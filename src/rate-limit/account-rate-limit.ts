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
import type { FastifyReply, FastifyRequest as Request } from 'fastify';
import { createHash } from 'node:crypto';
import { Observable, tap } from 'rxjs';
import { AccountService } from '../account/account.service';
import { identityKey } from '../users/identity-key';
import { UsersService } from '../users/users.service';
import type { AccountResponse } from '../common/envelopes';
import { clientKey } from '../common/client-address';
import { readParam } from '../common/request-params';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { LimitHeaders, type Quota } from './limit-headers';
import { accountFailureKey, Limit, MAILBOX_LIMIT, mailboxKey, RateLimiter, Taken } from './rate-limiter';

const MINUTE_MS = 60_000;

/** Requests per client address, per route. */
export const ADDRESS_LIMIT: Limit = { name: 'address', limit: 30, windowMs: MINUTE_MS };
/** Requests per mailbox, per route, where a request sends an activation mail or makes an account. */
export const ACCOUNT_REQUEST_LIMIT: Limit = MAILBOX_LIMIT;
/** OTP requests naming one identifier from one address: a stranger's share. */
export const OTP_PAIR_REQUEST_LIMIT: Limit = {
  name: 'otp-pair-requests',
  limit: 5,
  windowMs: 15 * MINUTE_MS,
};
/** OTP requests naming one identifier from every address together: the owner's share stays. */
export const OTP_IDENTIFIER_REQUEST_LIMIT: Limit = {
  name: 'otp-identifier-requests',
  limit: 30,
  windowMs: 60 * MINUTE_MS,
};
/** Failed guesses (password or OTP) naming one identifier from one address, all routes together. */
export const PAIR_FAILURE_LIMIT: Limit = { name: 'pair-failures', limit: 10, windowMs: 15 * MINUTE_MS };
/** Failed logins at one account from everywhere: the ASVS bound of 100 an hour. Past it the account locks. */
export const ACCOUNT_FAILURE_LIMIT: Limit = {
  name: 'account-failures',
  limit: 100,
  windowMs: 60 * MINUTE_MS,
};

export interface AccountLimitPolicy {
  /** Names the route in the keys of its per-route counters. */
  route: string;
  /** The request argument that names the account. */
  identifier: 'emailOrUsername' | 'email';
  /**
   * Answers that are failed guesses: such routes are limited by failures per identifier and
   * address, so a stranger's guesses do not lock the owner out. Without them the route is
   * limited by requests (see `perIdentifier`).
   */
  failures?: readonly string[];
  /** Failed guesses also count against the account's ASVS bound, past which it is locked (login). */
  locksAccount?: boolean;
  /**
   * Requests are counted per (identifier, address) and per identifier (OTP generation),
   * instead of per account: so a stranger spends only their own share, and no answer depends
   * on whether two identifiers name one account.
   */
  perIdentifier?: boolean;
}

const POLICY = Symbol('account-limit-policy');

/** Limits an account endpoint per client address and per the identifier or account it names. */
export const AccountRateLimit = (policy: AccountLimitPolicy) =>
  applyDecorators(SetMetadata(POLICY, policy), UseInterceptors(AccountRateLimitInterceptor));

/**
 * Counts are taken before the handler runs, so requests sent at once cannot overrun a limit;
 * a reserved failure is handed back when the answer turns out not to be one.
 *
 * Keys that count guesses and OTP requests name the identifier as sent, normalised
 * (identityKey, so every spelling of one email or name shares a budget), never the account
 * it resolves to: an answer must not tell whether a username and an email name one account.
 * Only the ASVS bound on failed logins counts by account; reaching it locks the account
 * (AccountService.lockAccount) instead of refusing anyone with 429.
 */
@Injectable()
export class AccountRateLimitInterceptor implements NestInterceptor {
  constructor(
    private readonly limiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersService,
    private readonly accounts: AccountService,
    private readonly reflector: Reflector,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const policy = this.reflector.get<AccountLimitPolicy | undefined>(POLICY, context.getHandler());
    if (!this.config.rateLimit || !policy) return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const address = clientKey(request.ip, this.config.clientIpv6Prefix);
    const counters = new LimitHeaders(reply, quotasOf(policy));
    const reserved = await this.reserve(policy, request, address, counters);
    counters.tell();
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
  private async reserve(
    policy: AccountLimitPolicy,
    request: Request,
    address: string,
    counters: LimitHeaders,
  ): Promise<Taken[]> {
    await counters.taking('address', this.limiter.take(`addr:${policy.route}:${address}`, ADDRESS_LIMIT), {
      own: true,
    });
    const identifier = readParam(request, policy.identifier);
    if (!identifier) return [];
    if (policy.perIdentifier) {
      const text = textKey(identifier);
      const pair = await counters.taking(
        'identifier-address',
        this.limiter.take(`req:${policy.route}:${text}:${address}`, OTP_PAIR_REQUEST_LIMIT),
        { own: true },
      );
      try {
        await counters.taking(
          'identifier',
          this.limiter.take(`req:${policy.route}:${text}`, OTP_IDENTIFIER_REQUEST_LIMIT),
        );
      } catch (error) {
        await this.limiter.giveBack(pair);
        throw error;
      }
      return [];
    }
    if (!policy.failures) {
      await counters.taking(
        'mailbox',
        this.limiter.take(`req:${policy.route}:${mailboxKey(identifier)}`, ACCOUNT_REQUEST_LIMIT),
      );
      return [];
    }
    const pair = await counters.taking(
      'identifier-address',
      this.limiter.take(`fail:${textKey(identifier)}:${address}`, PAIR_FAILURE_LIMIT),
      { own: true },
    );
    if (!policy.locksAccount) return [pair];
    try {
      return [pair, ...(await this.countAgainstAccount(identifier))];
    } catch (error) {
      await this.limiter.giveBack(pair);
      throw error;
    }
  }

  /**
   * One hit on the account's ASVS count. When the hour already holds the bound, the account
   * is locked (once, with a mail to its owner) and the request goes on: it is refused as a
   * wrong password whatever it carries, so the answer is the same as below the bound.
   */
  private async countAgainstAccount(identifier: string): Promise<Taken[]> {
    const user = await this.users.findByEmailOrName(identifier);
    if (!user) return [];
    const taken = await this.limiter.tryTake(accountFailureKey(user.id), ACCOUNT_FAILURE_LIMIT);
    if (taken) return [taken];
    await this.accounts.lockAccount(user.id);
    return [];
  }
}

/** The normalised identifier, hashed so a huge identifier makes a short key. */
export function textKey(identifier: string): string {
  return `text:${createHash('sha256').update(identityKey(identifier)).digest('base64url')}`;
}

/**
 * The quotas a route counts against, as its RateLimit-Policy tells them: the same for every
 * request of the route. The account's ASVS count is not among them: it refuses nobody.
 */
function quotasOf(policy: AccountLimitPolicy): Quota[] {
  const quotas: Quota[] = [{ ...ADDRESS_LIMIT, name: 'address' }];
  if (policy.perIdentifier) {
    quotas.push({ ...OTP_PAIR_REQUEST_LIMIT, name: 'identifier-address' });
    quotas.push({ ...OTP_IDENTIFIER_REQUEST_LIMIT, name: 'identifier' });
  } else if (!policy.failures) {
    quotas.push({ ...ACCOUNT_REQUEST_LIMIT, name: 'mailbox' });
  } else {
    // Failed guesses: a success hands its hit back.
    quotas.push({ ...PAIR_FAILURE_LIMIT, name: 'identifier-address' });
  }
  return quotas;
}

function isFailure(body: AccountResponse | undefined, failures: readonly string[] | undefined): boolean {
  return (
    body?.status === 'fail' && typeof body.message === 'string' && (failures ?? []).includes(body.message)
  );
}
