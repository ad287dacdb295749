import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, QueryDeepPartialEntity, Repository } from 'typeorm';
import { tooManyRequests } from '../common/api-error';
import { Clock } from '../common/clock';
import { persistedValue } from '../database/persisted-value';
import { isValidOtp, newOtpSecret, otpFor } from './otp';
import { User } from './user.entity';

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
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly clock: Clock,
  ) {}

  /** A fresh secret per issue, so each OTP is a new random code and the previous one dies. */
  async issue(manager: EntityManager, userId: number): Promise<{ otp: string }> {
    const now = this.clock.now();
    const hourOpen = '(otp_hour_start IS NULL OR otp_hour_start <= :hourAgo)';
    const dayOpen = '(otp_day_start IS NULL OR otp_day_start <= :dayAgo)';
    const secret = newOtpSecret();
    const issued = await manager
      .createQueryBuilder()
      .update(User)
      .set({
        // MySQL applies assignments in order and lets later ones see earlier results, so each
        // count is assigned before the window start that its condition reads.
        otpHourCount: () => `CASE WHEN ${hourOpen} THEN 1 ELSE otp_hour_count + 1 END`,
        otpHourStart: () => `CASE WHEN ${hourOpen} THEN :now ELSE otp_hour_start END`,
        otpDayCount: () => `CASE WHEN ${dayOpen} THEN 1 ELSE otp_day_count + 1 END`,
        otpDayStart: () => `CASE WHEN ${dayOpen} THEN :now ELSE otp_day_start END`,
        otpSecretKey: secret,
        otpIssuedAt: now,
        otpFailedAttempts: 0,
      })
      .where(
        `id = :id AND (${hourOpen} OR otp_hour_count < :perHour) AND (${dayOpen} OR otp_day_count < :perDay)`,
      )
      .setParameters({
        id: userId,
        now: this.dbDate(now),
        hourAgo: this.dbDate(new Date(now.getTime() - HOUR_MS)),
        dayAgo: this.dbDate(new Date(now.getTime() - DAY_MS)),
        ...OTP_ISSUE_LIMITS,
      })
      .execute();
    if (!issued.affected) throw tooManyRequests(await this.untilIssuable(manager, userId, now));
    return { otp: await otpFor(secret, now) };
  }

  /** When the windows that refused an issue have ended, for Retry-After. */
  private async untilIssuable(manager: EntityManager, userId: number, now: Date): Promise<number> {
    const user = await manager.findOneBy(User, { id: userId });
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
    const now = this.clock.now();
    const claimed = await this.users
      .createQueryBuilder()
      .update(User)
      .set({ otpFailedAttempts: () => 'otp_failed_attempts + 1' })
      .where(
        'id = :id AND otp_issued_at IS NOT NULL AND otp_issued_at > :bornAfter AND otp_failed_attempts < :max',
        {
          id: userId,
          bornAfter: this.dbDate(new Date(now.getTime() - OTP_LIFETIME_MS)),
          max: MAX_OTP_FAILURES,
        },
      )
      .execute();
    if (!claimed.affected) return null;
    const user = await this.users.findOne({
      where: { id: userId },
      select: { id: true, otpSecretKey: true, otpIssuedAt: true },
    });
    // The code of the step the OTP was issued in: its life is the 300 s from issue, not the
    // rest of a clock-aligned step.
    if (!user?.otpIssuedAt || !(await isValidOtp(user.otpSecretKey, otp, user.otpIssuedAt))) return null;
    await this.users
      .createQueryBuilder()
      .update(User)
      .set({ otpFailedAttempts: () => 'otp_failed_attempts - 1' })
      .where('id = :id AND otp_secret_key = :secret AND otp_failed_attempts > 0', {
        id: userId,
        secret: user.otpSecretKey,
      })
      .execute();
    return { secret: user.otpSecretKey };
  }

  /**
   * Uses up the checked OTP in the same conditional write that applies `changes`: of many
   * requests carrying one code, exactly one gets here first; the rest change nothing.
   */
  async consume(
    manager: EntityManager,
    userId: number,
    checked: CheckedOtp,
    changes: QueryDeepPartialEntity<User>,
  ): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(User)
      .set({ ...changes, otpSecretKey: newOtpSecret(), otpIssuedAt: null, otpFailedAttempts: 0 })
      .where('id = :id AND otp_secret_key = :secret AND otp_issued_at IS NOT NULL', {
        id: userId,
        secret: checked.secret,
      })
      .execute();
    return Boolean(result.affected);
  }

  private dbDate(date: Date): unknown {
    return persistedValue(this.users, 'otpIssuedAt', date);
  }
}
