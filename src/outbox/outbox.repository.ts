import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { persistedValue } from '../database/persisted-value';
import { OutboxJob } from './outbox-job.entity';

/** Due: its time has come and no worker holds a live lease on it. */
const DUE = 'next_attempt_at <= :now AND (locked_until IS NULL OR locked_until < :now)';

/** Every query on `outbox_jobs`. */
@Injectable()
export class OutboxRepository {
  constructor(@InjectRepository(OutboxJob) private readonly jobs: Repository<OutboxJob>) {}

  async insert(manager: EntityManager, job: Omit<OutboxJob, 'id'>): Promise<void> {
    await manager.insert(OutboxJob, job);
  }

  /** Ids only, oldest first: each is claimed one by one, and the claim decides. */
  async dueIds(now: Date, limit: number): Promise<number[]> {
    const rows = await this.jobs
      .createQueryBuilder('job')
      .select('job.id', 'id')
      .where(DUE, { now: this.dbDate(now) })
      .orderBy('job.id')
      .limit(limit)
      .getRawMany<{ id: number | string }>();
    return rows.map((row) => Number(row.id));
  }

  /**
   * Takes a lease on the job if it is still due and counts the attempt, in one conditional
   * UPDATE, so two workers never run one job at once; false when another worker has it.
   */
  async claim(id: number, now: Date, lockedUntil: Date): Promise<boolean> {
    const claim = await this.jobs
      .createQueryBuilder()
      .update(OutboxJob)
      .set({ lockedUntil, attempts: () => 'attempts + 1' })
      .where(`id = :id AND ${DUE}`, { id, now: this.dbDate(now) })
      .execute();
    return Boolean(claim.affected);
  }

  findById(id: number): Promise<OutboxJob | null> {
    return this.jobs.findOneBy({ id });
  }

  async delete(id: number, manager: EntityManager = this.jobs.manager): Promise<void> {
    await manager.delete(OutboxJob, { id });
  }

  async reschedule(id: number, nextAttemptAt: Date, lastError: string): Promise<void> {
    await this.jobs.update({ id }, { lockedUntil: null, nextAttemptAt, lastError });
  }

  /** Every job still in the table, due or waiting for its retry: the backlog the metrics show. */
  count(): Promise<number> {
    return this.jobs.count();
  }

  /** Hand-written conditions get values as the driver stores them (see persistedValue). */
  private dbDate(date: Date): unknown {
    return persistedValue(this.jobs, 'nextAttemptAt', date);
  }
}
