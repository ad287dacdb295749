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
/**
 * New codes one account may be given: per hour window and per day window. A request while a
 * code is pending mails that code again and is not a new code (see OtpService.issue).
 */
export const OTP_ISSUE_LIMITS = { perHour: 5, perDay: 10 } as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** What a successful check saw, so the write that uses the OTP can insist it is still the same one. */
export interface CheckedOtp {
  secret: string;
}

/** The code to mail: a new one, or the pending one again; it dies at `expiresAt`. */
export interface IssuedOtp {
  otp: string;
  fresh: boolean;
  expiresAt: Date;
}

/**
 * The life of a password-reset OTP. An OTP exists only once issued, lives 300 s and allows
 * MAX_OTP_FAILURES failed checks. While one is pending (issued less than 300 s ago, not used,
 * failures left) a request never replaces it: the same code is mailed again, so a stranger's
 * requests cannot kill the code its owner received. A new code (a new failure budget) is
 * made only when none is pending, at most OTP_ISSUE_LIMITS times an hour and a day. Every
 * step holds the user's row lock or is one conditional UPDATE, so the bounds hold across
 * requests running at once, in every process, on both databases.
 */
@Injectable()
export class OtpService {
  constructor(
    private readonly users: UsersRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The pending code, or a new one (fresh secret) when none is pending and the issue windows
   * allow it; 429 otherwise. Takes the user's row lock, so requests at once see one pending
   * code: the first makes it, the others mail it again.
   */
  async issue(manager: EntityManager, userId: number): Promise<IssuedOtp> {
    await this.users.lockUser(manager, userId);
    const user = await this.users.findById(userId, manager);
    if (!user) throw new Error(`user ${userId} vanished while an OTP was issued`);
    const now = this.clock.now();
    if (isPending(user, now)) {
      return {
        otp: await otpFor(user.otpSecretKey, user.otpIssuedAt!),
        fresh: false,
        expiresAt: new Date(user.otpIssuedAt!.getTime() + OTP_LIFETIME_MS),
      };
    }
    const hourOpen = !user.otpHourStart || user.otpHourStart.getTime() <= now.getTime() - HOUR_MS;
    const dayOpen = !user.otpDayStart || user.otpDayStart.getTime() <= now.getTime() - DAY_MS;
    const ends: number[] = [];
    if (!hourOpen && user.otpHourCount >= OTP_ISSUE_LIMITS.perHour)
      ends.push(user.otpHourStart!.getTime() + HOUR_MS);
    if (!dayOpen && user.otpDayCount >= OTP_ISSUE_LIMITS.perDay)
      ends.push(user.otpDayStart!.getTime() + DAY_MS);
    if (ends.length > 0) throw tooManyRequests(Math.max(...ends) - now.getTime());
    const secret = newOtpSecret();
    await this.users.writeOtpIssue(manager, userId, {
      secret,
      issuedAt: now,
      hourStart: hourOpen ? now : user.otpHourStart!,
      hourCount: hourOpen ? 1 : user.otpHourCount + 1,
      dayStart: dayOpen ? now : user.otpDayStart!,
      dayCount: dayOpen ? 1 : user.otpDayCount + 1,
    });
    return {
      otp: await otpFor(secret, now),
      fresh: true,
      expiresAt: new Date(now.getTime() + OTP_LIFETIME_MS),
    };
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

/** Issued less than OTP_LIFETIME_MS ago, not used, with failed checks left. */
function isPending(user: User, now: Date): boolean {
  return (
    user.otpIssuedAt !== null &&
    user.otpIssuedAt.getTime() > now.getTime() - OTP_LIFETIME_MS &&
    user.otpFailedAttempts < MAX_OTP_FAILURES
  );
}
