import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('users')
export class User {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 64 })
  name!: string;

  @Column({ type: 'varchar', length: 254 })
  email!: string;

  /** bcrypt hash; never leaves the service. */
  @Column({ type: 'varchar', length: 100, nullable: true })
  password!: string | null;

  @Column({ name: 'is_active', type: 'boolean', default: false })
  isActive!: boolean;

  @Column({ name: 'is_admin', type: 'boolean', default: false })
  isAdmin!: boolean;

  /** Base32 TOTP secret; never leaves the service. */
  @Column({ name: 'otp_secret_key', type: 'varchar', length: 64 })
  otpSecretKey!: string;

  @Column({ name: 'otp_failed_attempts', type: 'int', default: 0 })
  otpFailedAttempts!: number;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
