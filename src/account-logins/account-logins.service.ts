import { HttpStatus, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AccountService } from '../account/account.service';
import { PasswordHasher } from '../account/password-hasher.service';
import { AuditLog } from '../audit/audit-log.service';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import type { AuthUser } from '../common/decorators';
import { isMissing } from '../common/request-params';
import { Transactions } from '../database/transactions';
import { MailService } from '../mail/mail.service';
import { Outbox } from '../outbox/outbox.service';
import { AccessTokensRepository } from '../users/access-tokens.repository';
import { LoginsRepository } from '../users/logins.repository';
import { UsersRepository } from '../users/users.repository';
import { PASSWORD_RESET_PATH } from '../users/account-paths';
import type { User } from '../users/user.entity';
import type { LoginsEndedView, LoginView, PasswordChangeArgs } from './dto/account-logins.dto';
import { passwordChangedMail } from './mail-templates';
import { CurrentPassword } from './current-password';
import { LOGIN_MESSAGES } from './login-messages';

export { LOGIN_MESSAGES };

const unauthorized = () => new ApiError(HttpStatus.UNAUTHORIZED, 'Unauthorized');
const bad = (message: string) => new ApiError(HttpStatus.BAD_REQUEST, message);

/**
 * The caller's logins: listed, ended one by one or all but the current one, and the password
 * changed with the current one. Every write runs behind the user's row lock and first checks
 * that the caller's own login is still live (its record exists, of the user's credential
 * generation): of a change and an end that race, the one that commits first wins and the
 * other answers 401 (its login ended) without writing anything.
 */
@Injectable()
export class AccountLoginsService {
  constructor(
    private readonly logins: LoginsRepository,
    private readonly users: UsersRepository,
    private readonly accessTokens: AccessTokensRepository,
    private readonly accounts: AccountService,
    private readonly hasher: PasswordHasher,
    private readonly currentPassword: CurrentPassword,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly mail: MailService,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
  ) {}

  async list(caller: AuthUser): Promise<LoginView[]> {
    return (await this.logins.live(caller.id, this.clock.now(), caller.tokenHash)).map((login) => ({
      id: login.id,
      created_at: login.createdAt.toISOString(),
      last_used_at: login.lastUsedAt?.toISOString() ?? null,
      expires_at: login.expiresAt.toISOString(),
      client_address: login.clientAddress,
      user_agent: login.userAgent,
      current: login.current,
    }));
  }

  /** Ends one live login of the caller (the current one too: that is a logout); another's is unknown. */
  async end(caller: AuthUser, id: number | null): Promise<void> {
    const ended =
      id !== null &&
      (await this.transactions.run(async (manager) => {
        await this.liveCaller(manager, caller);
        if (!(await this.logins.end(manager, caller.id, id, this.clock.now()))) return false;
        await this.audit.append(manager, {
          actor: 'user',
          actorUserId: caller.id,
          action: 'login_end',
          subject: `user:${caller.id}`,
          details: { login_id: id },
        });
        return true;
      }));
    if (!ended) throw new ApiError(HttpStatus.NOT_FOUND, LOGIN_MESSAGES.notFound);
  }

  /** Ends every login of the caller but the current one; access tokens are not logins and stay. */
  async endOthers(caller: AuthUser): Promise<LoginsEndedView> {
    const ended = await this.transactions.run(async (manager) => {
      await this.liveCaller(manager, caller);
      const count = await this.logins.endAllBut(manager, caller.id, caller.tokenHash);
      await this.audit.append(manager, {
        actor: 'user',
        actorUserId: caller.id,
        action: 'logout_everywhere',
        subject: `user:${caller.id}`,
        details: { ended: count },
      });
      return count;
    });
    return { ended };
  }

  /**
   * The register form's rules for the new password, then the current one compared (a wrong
   * one is a failed guess, counted as a wrong login is: CurrentPassword), then one transaction
   * bound to what the comparison read: the same hash, and the caller's login still live (of
   * the generation read under the lock, which the write names). It stores the new hash with the generation raised, keeps the
   * caller's login (moved to the new generation), ends every other login and every access
   * token, records the change and queues the mail to the owner.
   */
  async changePassword(caller: AuthUser, args: PasswordChangeArgs, ip: string | undefined): Promise<void> {
    const { current_password: current, password, confirm_password: confirm } = args;
    CurrentPassword.required(current);
    if (isMissing(password)) throw bad(LOGIN_MESSAGES.missingPassword);
    if (isMissing(confirm)) throw bad(LOGIN_MESSAGES.missingConfirm);
    if (password !== confirm) throw bad(LOGIN_MESSAGES.mismatch);
    if (!this.accounts.isStrongPassword(password)) throw bad(LOGIN_MESSAGES.weak);
    const read = await this.currentPassword.check(caller, current, ip);

    const hash = await this.hasher.hash(password);
    const at = this.clock.now();
    await this.transactions.run(async (manager) => {
      const user = await this.liveCaller(manager, caller);
      // Another change of the password (made with this same login, which it kept) committed since
      // the read. A change that kept this login and the password (the second factor turned on
      // with it) raised the generation but leaves what the comparison proved true.
      if (user.password !== read.password) {
        throw new ApiError(HttpStatus.CONFLICT, LOGIN_MESSAGES.changedMeanwhile);
      }
      const next = user.credentialGeneration + 1;
      if (!(await this.users.changePassword(manager, user.id, hash, user.credentialGeneration))) {
        throw new ApiError(HttpStatus.CONFLICT, LOGIN_MESSAGES.changedMeanwhile);
      }
      const endedLogins = await this.logins.endAllBut(manager, user.id, caller.tokenHash);
      await this.logins.keep(manager, user.id, caller.tokenHash, next);
      const endedTokens = await this.accessTokens.deleteAll(manager, user.id);
      await this.audit.append(manager, {
        actor: 'user',
        actorUserId: user.id,
        action: 'password_change',
        subject: `user:${user.id}`,
        details: { ended_logins: endedLogins, ended_access_tokens: endedTokens },
      });
      await this.mail.queue(
        manager,
        passwordChangedMail(user.email, at, this.accounts.link(PASSWORD_RESET_PATH)),
      );
    });
    this.outbox.nudge();
  }

  /**
   * Takes the user's row lock and reads the user under it; 401 unless the caller's login is
   * still recorded under the user's credential generation and the user is still active.
   */
  private async liveCaller(manager: EntityManager, caller: AuthUser): Promise<User> {
    await this.users.lockUser(manager, caller.id);
    const user = await this.users.findById(caller.id, manager);
    const generation = await this.users.loginGeneration(manager, caller.tokenHash);
    if (!user || generation !== user.credentialGeneration || !user.isActive || user.deactivatedAt) {
      throw unauthorized();
    }
    return user;
  }
}
