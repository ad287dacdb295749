import { HttpStatus, Injectable } from '@nestjs/common';
import { fitsBcrypt, PasswordHasher } from '../account/password-hasher.service';
import { ApiError } from '../common/api-error';
import type { AuthUser } from '../common/decorators';
import { isMissing } from '../common/request-params';
import { Transactions } from '../database/transactions';
import type { User } from '../users/user.entity';
import { UsersRepository } from '../users/users.repository';
import { LOGIN_MESSAGES } from './login-messages';
import { PasswordGuesses } from './password-guesses';

/** Compared instead of a current password over bcrypt's 72 bytes, which is wrong whatever it is. */
const OVERLONG_PLACEHOLDER = 'overlong password placeholder';

/**
 * The account's current password, asked of a signed-in caller before a change of its
 * credentials (the password change, a second factor's enrolment), so that a stolen session
 * alone cannot make one. A wrong one is a failed guess counted as a wrong login is
 * (PasswordGuesses): 429 past the limit of the client's address, 403 while the account is
 * locked, else 403 `Current password is incorrect`.
 */
@Injectable()
export class CurrentPassword {
  constructor(
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly guesses: PasswordGuesses,
    private readonly transactions: Transactions,
  ) {}

  /** 400 `Missing current password value` when it is not given; the check's first step. */
  static required(given: string | undefined): asserts given is string {
    if (isMissing(given)) throw new ApiError(HttpStatus.BAD_REQUEST, LOGIN_MESSAGES.missingCurrent);
  }

  /**
   * The account as the comparison read it (its hash and credential generation): the write that
   * follows must be bound to it. 401 unless the caller's login is live.
   */
  async check(caller: AuthUser, given: string, ip: string | undefined): Promise<User> {
    const read = await this.users.findById(caller.id);
    const generation = await this.users.loginGeneration(this.transactions.manager, caller.tokenHash);
    // A login of an older generation than the account's is dead; a newer one was kept by a
    // change (the second factor turned on with it) that committed between the two reads.
    if (!read || generation === null || generation < read.credentialGeneration) {
      throw new ApiError(HttpStatus.UNAUTHORIZED, 'Unauthorized');
    }
    const guess = await this.guesses.take(read, ip);
    if (guess === 'locked' || read.lockedAt) {
      if (guess !== 'locked') await this.guesses.giveBack(guess);
      throw new ApiError(HttpStatus.FORBIDDEN, LOGIN_MESSAGES.locked);
    }
    const matches = fitsBcrypt(given)
      ? await this.hasher.verify(given, read.password)
      : await this.hasher.verify(OVERLONG_PLACEHOLDER, null);
    if (!matches) throw new ApiError(HttpStatus.FORBIDDEN, LOGIN_MESSAGES.wrongCurrent);
    await this.guesses.giveBack(guess);
    return read;
  }
}
