import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('users')
export class User {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 64 })
  name!: string;

  @Column({ type: 'varchar', length: 254 })
  email!: string;

  /** identityKey(name): every lookup by name uses it; null only for a pre-key duplicate. */
  @Column({ name: 'name_key', type: 'varchar', length: 255, nullable: true })
  nameKey!: string | null;

  /** identityKey(email): every lookup by email uses it; null only for a pre-key duplicate. */
  @Column({ name: 'email_key', type: 'varchar', length: 255, nullable: true })
  emailKey!: string | null;

  /**
   * mailboxOf(email): the mailbox the address reaches, so the rules about one person (own
   * plugins) compare people, not rows; null only until the start-up upgrade fills it in.
   */
  @Column({ type: 'varchar', length: 255, nullable: true })
  mailbox!: string | null;

  /** bcrypt hash; never leaves the service. */
  @Column({ type: 'varchar', length: 100, nullable: true })
  password!: string | null;

  /** The email is confirmed (the spec's activation). Login also needs deactivatedAt null. */
  @Column({ name: 'is_active', type: 'boolean', default: false })
  isActive!: boolean;

  /** Set when an operator takes the account out of service (svc-admin deactivate). */
  @Column({ name: 'deactivated_at', type: 'datetime', precision: 3, nullable: true })
  deactivatedAt!: Date | null;

  /**
   * The password was set through an OTP mailed to the address, so the mailbox owner chose
   * it. Only such a password may be used by an admin listed in SVC_ADMIN_EMAILS.
   */
  @Column({ name: 'password_set_via_otp', type: 'boolean', default: false })
  passwordSetViaOtp!: boolean;

  @Column({ name: 'is_admin', type: 'boolean', default: false })
  isAdmin!: boolean;

  /** Base32 TOTP secret; never leaves the service. */
  @Column({ name: 'otp_secret_key', type: 'varchar', length: 64 })
  otpSecretKey!: string;

  /** When the outstanding OTP was issued; null when none is outstanding. */
  @Column({ name: 'otp_issued_at', type: 'datetime', precision: 3, nullable: true })
  otpIssuedAt!: Date | null;

  /** Failed checks against the outstanding OTP; reset only when a new one is issued. */
  @Column({ name: 'otp_failed_attempts', type: 'int', default: 0 })
  otpFailedAttempts!: number;

  /** Failed checks of replaced OTPs in the hour window that started at otpHourStart (see OtpService.issue). */
  @Column({ name: 'otp_hour_start', type: 'datetime', precision: 3, nullable: true })
  otpHourStart!: Date | null;

  @Column({ name: 'otp_hour_count', type: 'int', default: 0 })
  otpHourCount!: number;

  /** Failed checks of replaced OTPs in the day window that started at otpDayStart. */
  @Column({ name: 'otp_day_start', type: 'datetime', precision: 3, nullable: true })
  otpDayStart!: Date | null;

  @Column({ name: 'otp_day_count', type: 'int', default: 0 })
  otpDayCount!: number;

  /**
   * Set when the account passed the bound on failed logins (see AccountLocks): login is
   * refused until the owner sets a new password through the OTP mail, which clears it.
   */
  @Column({ name: 'locked_at', type: 'datetime', precision: 3, nullable: true })
  lockedAt!: Date | null;

  /**
   * Raised by every change that ends the user's sessions (UsersRepository.revokeAllTokens); a
   * token is honoured only while it equals the generation the token was issued under.
   */
  @Column({ name: 'credential_generation', type: 'int', default: 0 })
  credentialGeneration!: number;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
