import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, IsNull, Not, type Repository } from 'typeorm';
import { RecoveryCode, UserTotp } from './totp.entity';

/**
 * Every query of `user_totp` and `user_recovery_codes`. Each decision that uses a secret or a
 * code is one conditional write naming what the decider read (the secret, the step, the
 * code's hash), so of requests at once exactly one wins and the rest change nothing.
 */
@Injectable()
export class SecondFactorRepository {
  constructor(
    @InjectRepository(UserTotp) private readonly totp: Repository<UserTotp>,
    @InjectRepository(RecoveryCode) private readonly codes: Repository<RecoveryCode>,
  ) {}

  find(userId: number, manager: EntityManager = this.totp.manager): Promise<UserTotp | null> {
    return manager.findOneBy(UserTotp, { userId });
  }

  /** One indexed read by primary key: the admin guard's, under ADMIN_SECOND_FACTOR=required. */
  isEnabled(userId: number): Promise<boolean> {
    return this.totp.existsBy({ userId, enabledAt: Not(IsNull()) });
  }

  /** A new pending secret, replacing a pending one; the caller holds the user's row lock and saw none enabled. */
  async writePending(manager: EntityManager, userId: number, secret: string, now: Date): Promise<void> {
    const { affected } = await manager.update(
      UserTotp,
      { userId, enabledAt: IsNull() },
      { secret, createdAt: now, lastStep: null },
    );
    if (!affected)
      await manager.insert(UserTotp, { userId, secret, createdAt: now, enabledAt: null, lastStep: null });
  }

  /** Turns on the pending secret the user confirmed, and no other: false when it was replaced or is on already. */
  async enable(
    manager: EntityManager,
    userId: number,
    secret: string,
    step: number,
    now: Date,
  ): Promise<boolean> {
    const { affected } = await manager.update(
      UserTotp,
      { userId, secret, enabledAt: IsNull() },
      { enabledAt: now, lastStep: step },
    );
    return Boolean(affected);
  }

  /**
   * Accepts a code of `step` for the enabled `secret` once: the step must be newer than every
   * step accepted before (replay), in one conditional write.
   */
  async acceptStep(
    userId: number,
    secret: string,
    step: number,
    manager: EntityManager = this.totp.manager,
  ): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(UserTotp)
      .set({ lastStep: step })
      .where('user_id = :userId AND secret = :secret AND enabled_at IS NOT NULL', { userId, secret })
      .andWhere('(last_step IS NULL OR last_step < :step)', { step })
      .execute();
    return Boolean(result.affected);
  }

  /** Removes the user's second factor (pending or on) and recovery codes; `secret`: only that one. */
  async remove(manager: EntityManager, userId: number, secret?: string): Promise<boolean> {
    const { affected } = await manager.delete(
      UserTotp,
      secret === undefined ? { userId } : { userId, secret },
    );
    await manager.delete(RecoveryCode, { userId });
    return Boolean(affected);
  }

  async replaceRecoveryCodes(
    manager: EntityManager,
    userId: number,
    hashes: readonly string[],
  ): Promise<void> {
    await manager.delete(RecoveryCode, { userId });
    await manager.insert(
      RecoveryCode,
      hashes.map((codeHash) => ({ userId, codeHash })),
    );
  }

  /** Uses up one recovery code: true for the one request whose delete removed it. */
  async useRecoveryCode(manager: EntityManager, userId: number, codeHash: string): Promise<boolean> {
    const { affected } = await manager.delete(RecoveryCode, { userId, codeHash });
    return Boolean(affected);
  }

  recoveryCodesLeft(manager: EntityManager, userId: number): Promise<number> {
    return manager.countBy(RecoveryCode, { userId });
  }
}
