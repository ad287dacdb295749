import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CurrentPassword } from '../account-logins/current-password';
import { LOGIN_MESSAGES } from '../account-logins/login-messages';
import { AccountService } from '../account/account.service';
import { AuditLog } from '../audit/audit-log.service';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import type { AuthUser } from '../common/decorators';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Transactions } from '../database/transactions';
import { MailService } from '../mail/mail.service';
import { Outbox } from '../outbox/outbox.service';
import { type Limit, RateLimiter, type Taken } from '../rate-limit/rate-limiter';
import { PASSWORD_RESET_PATH } from '../users/account-paths';
import { UsersRepository } from '../users/users.repository';
import type { EnrolmentView, RecoveryCodesView } from './dto/second-factor.dto';
import { secondFactorOffMail, secondFactorOnMail } from './mail-templates';
import { SECOND_FACTOR_MESSAGES as MESSAGES } from './second-factor-messages';
import { SecondFactorRepository } from './second-factor.repository';
import type { User } from '../users/user.entity';
import type { UserTotp } from './totp.entity';
import { newRecoveryCodes, newTotpSecret, otpauthUri, recoveryCodeHash, totpStep } from './totp';

/** Wrong codes on the signed-in routes (confirm, turn off), per user: a stolen session's guesses. */
export const SECOND_FACTOR_FAILURE_LIMIT: Limit = {
  name: 'second-factor-failures',
  limit: 10,
  windowMs: 15 * 60_000,
};

/** What a login's second factor came to: not enrolled (today's answers), a code accepted, or refused. */
export type LoginFactor = 'off' | 'passed' | 'refused';

const conflict = (message: string) => new ApiError(HttpStatus.CONFLICT, message);
const invalidCode = () => new ApiError(HttpStatus.BAD_REQUEST, MESSAGES.invalidCode);

/**
 * TOTP as a second factor (docs/decisions/second-factor.md). Enrolment is pending until the
 * first code confirms the secret it was made for; every accepted code is one conditional write
 * (a step newer than the last accepted, a recovery code deleted), so a code works once however
 * many requests carry it at once.
 */
@Injectable()
export class SecondFactorService {
  constructor(
    private readonly factors: SecondFactorRepository,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
    private readonly currentPassword: CurrentPassword,
    private readonly accounts: AccountService,
    private readonly mail: MailService,
    private readonly outbox: Outbox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A new pending secret (a pending one is replaced), with the current password: a stolen
   * session alone cannot enrol a factor of the thief's. The password is checked as the password
   * change checks it (CurrentPassword: a wrong one is a failed login), then the write is bound
   * to what the check read: the caller's login still live and the hash unchanged.
   * Refused while a factor is on.
   */
  async enrol(caller: AuthUser, current: string | undefined, ip: string | undefined): Promise<EnrolmentView> {
    CurrentPassword.required(current);
    const read = await this.currentPassword.check(caller, current, ip);
    const secret = newTotpSecret();
    await this.transactions.run(async (manager) => {
      await this.users.lockUser(manager, caller.id);
      const user = await this.liveCaller(manager, caller);
      if (user.password !== read.password) throw conflict(LOGIN_MESSAGES.changedMeanwhile);
      if ((await this.factors.find(caller.id, manager))?.enabledAt) throw conflict(MESSAGES.alreadyOn);
      await this.factors.writePending(manager, caller.id, secret, this.clock.now());
    });
    return { secret, otpauth_uri: otpauthUri(secret, caller.email) };
  }

  /**
   * The first code turns the pending secret on, the one it was checked against and no other,
   * with ten new recovery codes; every other session of the account ends (a login in flight
   * that read the account before records a token of the old generation, which never works).
   */
  async confirm(caller: AuthUser, otp: string | undefined): Promise<RecoveryCodesView> {
    const pending = await this.factors.find(caller.id);
    if (pending?.enabledAt) throw conflict(MESSAGES.alreadyOn);
    if (!pending) throw conflict(MESSAGES.nothingPending);
    const step = await this.guessed(caller.id, () => totpStep(pending.secret, otp ?? '', this.clock.now()));
    const codes = newRecoveryCodes();
    await this.transactions.run(async (manager) => {
      await this.users.lockUser(manager, caller.id);
      const user = await this.liveCaller(manager, caller);
      if (!(await this.factors.enable(manager, caller.id, pending.secret, step, this.clock.now()))) {
        throw conflict(
          (await this.factors.find(caller.id, manager))?.enabledAt ? MESSAGES.alreadyOn : MESSAGES.replaced,
        );
      }
      await this.factors.replaceRecoveryCodes(
        manager,
        caller.id,
        codes.map((code) => recoveryCodeHash(code)!),
      );
      await this.users.revokeAllTokensBut(manager, caller.id, caller.tokenHash);
      await this.audit.append(manager, {
        actor: 'user',
        actorUserId: caller.id,
        action: 'second_factor_enable',
        subject: `user:${caller.id}`,
        details: { method: 'totp', recovery_codes: codes.length },
      });
      await this.mail.queue(manager, secondFactorOnMail(user.email, this.clock.now(), this.resetLink()));
    });
    this.outbox.nudge();
    return { recovery_codes: codes };
  }

  /** Turned off with a current code or a recovery code, each used up by the write that turns it off. */
  async disable(caller: AuthUser, otp: string | undefined): Promise<void> {
    const factor = await this.factors.find(caller.id);
    if (!factor?.enabledAt) throw conflict(MESSAGES.notOn);
    const code = otp ?? '';
    await this.guessed(caller.id, async () => {
      const step = /^\d{6}$/.test(code) ? await totpStep(factor.secret, code, this.clock.now()) : null;
      const recoveryHash = step === null ? recoveryCodeHash(code) : null;
      if (step === null && recoveryHash === null) return null;
      return this.transactions.run(async (manager) => {
        const used =
          step !== null
            ? await this.factors.acceptStep(caller.id, factor.secret, step, manager)
            : await this.factors.useRecoveryCode(manager, caller.id, recoveryHash!);
        if (!used || !(await this.factors.remove(manager, caller.id, factor.secret))) return null;
        await this.audit.append(manager, {
          actor: 'user',
          actorUserId: caller.id,
          action: 'second_factor_disable',
          subject: `user:${caller.id}`,
          details: { method: step !== null ? 'totp' : 'recovery_code' },
        });
        await this.mail.queue(
          manager,
          secondFactorOffMail(
            caller.email,
            this.clock.now(),
            step !== null ? 'totp' : 'recovery_code',
            this.resetLink(),
          ),
        );
        return true;
      });
    });
    this.outbox.nudge();
  }

  /**
   * The login's check, after the password's: a user without a confirmed TOTP is `off` (the
   * code, if any, is not looked at); else `otp` must be a current code not used before, or an
   * unused recovery code.
   */
  async checkLogin(userId: number, otp: string | undefined): Promise<LoginFactor> {
    const factor = await this.factors.find(userId);
    if (!factor?.enabledAt) return 'off';
    return (await this.accepted(factor, otp ?? '')) ? 'passed' : 'refused';
  }

  /** ADMIN_SECOND_FACTOR=required: whether the admin guard lets this admin through. */
  isEnabled(userId: number): Promise<boolean> {
    return this.factors.isEnabled(userId);
  }

  /** The user read under the row lock the caller holds; 401 unless the caller's login is still live. */
  private async liveCaller(manager: EntityManager, caller: AuthUser): Promise<User> {
    const user = await this.users.findById(caller.id, manager);
    if (
      !user ||
      (await this.users.loginGeneration(manager, caller.tokenHash)) !== user.credentialGeneration
    ) {
      throw new ApiError(HttpStatus.UNAUTHORIZED, 'Unauthorized');
    }
    return user;
  }

  private resetLink(): string {
    return this.accounts.link(PASSWORD_RESET_PATH);
  }

  private async accepted(factor: UserTotp, code: string): Promise<boolean> {
    if (/^\d{6}$/.test(code)) {
      const step = await totpStep(factor.secret, code, this.clock.now());
      return step !== null && (await this.factors.acceptStep(factor.userId, factor.secret, step));
    }
    const hash = recoveryCodeHash(code);
    if (!hash) return false;
    return this.transactions.run(async (manager) => {
      if (!(await this.factors.useRecoveryCode(manager, factor.userId, hash))) return false;
      await this.recordRecovery(manager, factor.userId);
      return true;
    });
  }

  private async recordRecovery(manager: EntityManager, userId: number): Promise<void> {
    await this.audit.append(manager, {
      actor: 'user',
      actorUserId: userId,
      action: 'second_factor_recovery',
      subject: `user:${userId}`,
      details: { recovery_codes_left: await this.factors.recoveryCodesLeft(manager, userId) },
    });
  }

  /**
   * A guess on a signed-in route: one of the user's failures is taken before `check` runs and
   * handed back when it passes, so guesses sent at once cannot pass the limit. Null from
   * `check` is a wrong code (400).
   */
  private async guessed<T>(userId: number, check: () => Promise<T | null>): Promise<T> {
    const taken: Taken | null = this.config.rateLimit
      ? await this.limiter.take(`fail:second-factor:user:${userId}`, SECOND_FACTOR_FAILURE_LIMIT)
      : null;
    const result = await check();
    if (result === null) throw invalidCode();
    if (taken) await this.limiter.giveBack(taken).catch(() => undefined);
    return result;
  }
}
