import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Work that must happen after a commit and survive a crash: written in the same transaction
 * as the record it announces, done by the outbox worker, deleted once done. Payloads can hold
 * secrets (an OTP, an activation link): they live only until delivery and are never logged.
 */
@Entity('outbox_jobs')
export class OutboxJob {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 64 })
  kind!: string;

  /** JSON. */
  @Column({ type: 'text' })
  payload!: string;

  @Column({ type: 'int', default: 0 })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3 })
  nextAttemptAt!: Date;

  /** A worker's lease: no other worker takes the job before it ends. */
  @Column({ name: 'locked_until', type: 'datetime', precision: 3, nullable: true })
  lockedUntil!: Date | null;

  /** Why the last attempt failed: the error's message only, never the payload. */
  @Column({ name: 'last_error', type: 'varchar', length: 255, nullable: true })
  lastError!: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
