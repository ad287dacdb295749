import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A user's TOTP: pending from `POST account/totp` until confirmed (`enabledAt` null), then on.
 * The secret never leaves the service but in the enrolment answer.
 */
@Entity('user_totp')
export class UserTotp {
  @PrimaryColumn({ name: 'user_id', type: 'int' })
  userId!: number;

  /** Base32 (RFC 4648), 160 bits. */
  @Column({ type: 'varchar', length: 64 })
  secret!: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'enabled_at', type: 'datetime', precision: 3, nullable: true })
  enabledAt!: Date | null;

  /** The newest 30-second step a code was accepted for; a code of that step or older is refused. */
  @Column({ name: 'last_step', type: 'int', nullable: true })
  lastStep!: number | null;
}

/** One unused recovery code: only its SHA-256 is kept. */
@Entity('user_recovery_codes')
export class RecoveryCode {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'user_id', type: 'int' })
  userId!: number;

  @Column({ name: 'code_hash', type: 'varchar', length: 64 })
  codeHash!: string;
}
