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
 * Failed checks one account's codes may take, per hour window and per day window: the bound
 * on guesses. A new code is made only if its MAX_OTP_FAILURES still fit both, so a code that
 * expired or was used without wrong guesses costs nothing, and neither do requests that mail
 * the pending code again (see OtpService.issue).
 */
export const OTP_FAILURE_BUDGET = { perHour: 25, perDay: 50 } as const;

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
 * made only when none is pending and its failures fit OTP_FAILURE_BUDGET. Every
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
    // The failed checks of the code being replaced join the windows now (a used code has none).
    const spent = user.otpIssuedAt ? user.otpFailedAttempts : 0;
    const hour = withFailures(user.otpHourStart, user.otpHourCount, HOUR_MS, now, spent);
    const day = withFailures(user.otpDayStart, user.otpDayCount, DAY_MS, now, spent);
    const ends: number[] = [];
    if (hour.count + MAX_OTP_FAILURES > OTP_FAILURE_BUDGET.perHour) ends.push(hour.start.getTime() + HOUR_MS);
    if (day.count + MAX_OTP_FAILURES > OTP_FAILURE_BUDGET.perDay) ends.push(day.start.getTime() + DAY_MS);
    // Refused, the pending (spent) code stays as it is: its failures are counted when it is replaced.
    if (ends.length > 0) throw tooManyRequests(Math.max(...ends) - now.getTime());
    const secret = newOtpSecret();
    await this.users.writeOtpIssue(manager, userId, {
      secret,
      issuedAt: now,
      hourStart: hour.start,
      hourCount: hour.count,
      dayStart: day.start,
      dayCount: day.count,
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

/** A failure window with `failures` added: a window that has ended starts again now. */
function withFailures(
  start: Date | null,
  count: number,
  lengthMs: number,
  now: Date,
  failures: number,
): { start: Date; count: number } {
  if (!start || start.getTime() <= now.getTime() - lengthMs) return { start: now, count: failures };
  return { start, count: count + failures };
}

/** Issued less than OTP_LIFETIME_MS ago, not used, with failed checks left. */
function isPending(user: User, now: Date): boolean {
  return (
    user.otpIssuedAt !== null &&
    user.otpIssuedAt.getTime() > now.getTime() - OTP_LIFETIME_MS &&
    user.otpFailedAttempts < MAX_OTP_FAILURES
  );
}
