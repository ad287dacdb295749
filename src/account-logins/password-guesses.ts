import { Inject, Injectable } from '@nestjs/common';
import { AccountService } from '../account/account.service';
import { clientKey } from '../common/client-address';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ACCOUNT_FAILURE_LIMIT, PAIR_FAILURE_LIMIT, textKey } from '../rate-limit/account-rate-limit';
import { accountFailureKey, RateLimiter, type Taken } from '../rate-limit/rate-limiter';
import type { User } from '../users/user.entity';

/**
 * A current password given to the password change is a guess like a password given to login,
 * and counts in the same counters (src/rate-limit/account-rate-limit.ts): the failures naming
 * the account's email from the client's address (10 per 15 minutes, then 429), and the
 * account's failures from everywhere (the ASVS bound: the attempt after 100 in an hour locks
 * the account, with its one mail). Taken before the comparison, so guesses sent at once cannot
 * overrun them; handed back when the password was right. Nothing is counted with RATE_LIMIT=off.
 */
@Injectable()
export class PasswordGuesses {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly accounts: AccountService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The hits taken, or `locked` when the account's bound was full and the account is now locked. */
  async take(user: User, ip: string | undefined): Promise<Taken[] | 'locked'> {
    if (!this.config.rateLimit) return [];
    const address = clientKey(ip, this.config.clientIpv6Prefix);
    const pair = await this.limiter.take(`fail:${textKey(user.email)}:${address}`, PAIR_FAILURE_LIMIT);
    const account = await this.limiter.tryTake(accountFailureKey(user.id), ACCOUNT_FAILURE_LIMIT);
    if (account) return [pair, account];
    await this.accounts.lockAccount(user.id);
    return 'locked';
  }

  /** Hands back hits of a guess that was right; a store that cannot answer keeps them. */
  async giveBack(taken: Taken[]): Promise<void> {
    await Promise.all(taken.map((hit) => this.limiter.giveBack(hit))).catch(() => undefined);
  }
}
