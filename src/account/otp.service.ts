import { Injectable } from '@nestjs/common';
import type { EntityManager, QueryDeepPartialEntity } from 'typeorm';
import { tooManyRequests } from '../common/api-error';
import { Clock } from '../common/clock';
import type { User } from '../users/user.entity';
import { UsersRepository } from '../users/users.repository';
import { isValidOtp, newOtpSecret, otpFor } from './otp';

/** An OTP is accepted for this long after it was issued, as its mail says. */
export const OTP_LIFETIME_MS = 300_000;
/** Failed checks allowed per issued OTP, across verify/otp and new-password together. */
export const MAX_OTP_FAILURES = 5;
/** OTPs one account may be sent: per hour window and per day window. */
export const OTP_ISSUE_LIMITS = { perHour: 5, perDay: 10 } as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** What a successful check saw, so the write that uses the OTP can insist it is still the same one. */
export interface CheckedOtp {
  secret: string;
}

/**
 * The life of a password-reset OTP. An OTP exists only once issued, lives 300 s and allows
 * MAX_OTP_FAILURES failed checks; only a new issue (itself bounded per hour and per day)
 * gives a new budget. Every step is one conditional UPDATE, so the bounds hold across
 * requests running at once, in every process, on both databases.
 */
@Injectable()
export class OtpService {
  constructor(
    private readonly users: UsersRepository,
    private readonly clock: Clock,
  ) {}

  /** A fresh secret per issue, so each OTP is a new random code and the previous one dies. */
  async issue(manager: EntityManager, userId: number): Promise<{ otp: string }> {
    const now = this.clock.now();
    const secret = newOtpSecret();
    const issued = await this.users.issueOtp(manager, userId, {
      secret,
      now,
      hourAgo: new Date(now.getTime() - HOUR_MS),
      dayAgo: new Date(now.getTime() - DAY_MS),
      ...OTP_ISSUE_LIMITS,
    });
    if (!issued) throw tooManyRequests(await this.untilIssuable(manager, userId, now));
    return { otp: await otpFor(secret, now) };
  }

  /** When the windows that refused an issue have ended, for Retry-After. */
  private async untilIssuable(manager: EntityManager, userId: number, now: Date): Promise<number> {
    const user = await this.users.findById(userId, manager);
    const ends = [now.getTime()];
    if (user?.otpHourStart && user.otpHourCount >= OTP_ISSUE_LIMITS.perHour)
      ends.push(user.otpHourStart.getTime() + HOUR_MS);
    if (user?.otpDayStart && user.otpDayCount >= OTP_ISSUE_LIMITS.perDay)
      ends.push(user.otpDayStart.getTime() + DAY_MS);
    return Math.max(...ends) - now.getTime();
  }

  /**
   * Claims one of the outstanding OTP's attempts before comparing, so guesses sent at once
   * cannot exceed the budget; a right code hands its claim back, so only failures count.
   */
  async check(userId: number, otp: string): Promise<CheckedOtp | null> {
    const bornAfter = new Date(this.clock.now().getTime() - OTP_LIFETIME_MS);
    if (!(await this.users.claimOtpAttempt(userId, bornAfter, MAX_OTP_FAILURES))) return null;
    const user = await this.users.otpState(userId);
    // The code of the step the OTP was issued in: its life is the 300 s from issue, not the
    // rest of a clock-aligned step.
    if (!user?.otpIssuedAt || !(await isValidOtp(user.otpSecretKey, otp, user.otpIssuedAt))) return null;
    await this.users.returnOtpAttempt(userId, user.otpSecretKey);
    return { secret: user.otpSecretKey };
  }

  /**
   * Uses up the checked OTP in the same conditional write that applies `changes`: of many
   * requests carrying one code, exactly one gets here first; the rest change nothing.
   */
  consume(
    manager: EntityManager,
    userId: number,
    checked: CheckedOtp,
    changes: QueryDeepPartialEntity<User>,
  ): Promise<boolean> {
    return this.users.consumeOtp(manager, userId, checked.secret, {
      ...changes,
      otpSecretKey: newOtpSecret(),
    });
  }
}
