import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, LessThan, Not, QueryFailedError, Repository } from 'typeorm';
import { UserLoginToken } from '../auth/user-login-token.entity';
import { Clock } from '../common/clock';
import { AccountResponse, accountFail, accountSuccess } from '../common/envelopes';
import { isMissing } from '../common/request-params';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MailDeliveryError, MailService } from '../mail/mail.service';
import { EmailConfirmation } from './email-confirmation.entity';
import { activationMail, otpMail } from './mail-templates';
import { isValidOtp, newOtpSecret, otpFor } from './otp';
import { fitsBcrypt, PasswordHasher } from './password-hasher.service';
import { User } from './user.entity';
import { normalizeEmail, UsersService } from './users.service';

const CONFIRMATION_LIFETIME_MS = 60 * 60 * 1000;
/** After this many wrong OTPs the secret is replaced, so the code under attack is dead. */
export const MAX_OTP_FAILURES = 5;
const MAX_USERNAME_LENGTH = 64;
const MAX_EMAIL_LENGTH = 254;

export interface RegistrationParams {
  username?: string;
  email?: string;
  password?: string;
  confirmPassword?: string;
}

/** The account flows of the spec, with its messages and check orders. */
@Injectable()
export class AccountService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(EmailConfirmation) private readonly confirmations: Repository<EmailConfirmation>,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly usersService: UsersService,
    private readonly hasher: PasswordHasher,
    private readonly mail: MailService,
    private readonly clock: Clock,
  ) {}

  async register({
    username,
    email,
    password,
    confirmPassword,
  }: RegistrationParams): Promise<AccountResponse> {
    if (isMissing(username)) return accountFail('Missing username value');
    if (isMissing(email)) return accountFail('Missing email value');
    if (isMissing(password)) return accountFail('Missing password value');
    if (isMissing(confirmPassword)) return accountFail('Missing confirm password value');
    if (password !== confirmPassword) return accountFail("Password doesn't match");
    // The length bound keeps an operator's own EMAIL_PATTERN away from huge inputs.
    if (email.length > MAX_EMAIL_LENGTH || !this.config.emailPattern.test(email)) {
      return accountFail('Choose a valid email');
    }
    if (!this.isStrongPassword(password)) return accountFail('Choose a strong password');
    if (!isAcceptableUsername(username)) return accountFail('Choose a valid username');
    if (await this.usersService.findByName(username)) return accountFail('Username already exists');
    if (await this.usersService.findByEmail(email)) return accountFail('Email already exists');

    const user = this.users.create({
      name: username,
      email: normalizeEmail(email),
      password: await this.hasher.hash(password),
      isActive: false,
      // SVC_ADMIN_EMAILS names admins whether they registered before the start or after it.
      isAdmin: this.config.adminEmails.includes(normalizeEmail(email)),
      otpSecretKey: newOtpSecret(),
      otpFailedAttempts: 0,
      createdAt: this.clock.now(),
    });
    try {
      await this.users.insert(user);
    } catch (error) {
      // Two registrations raced past the checks above; the unique index decided.
      if (!(error instanceof QueryFailedError)) throw error;
      if (await this.usersService.findByName(username)) return accountFail('Username already exists');
      return accountFail('Email already exists');
    }
    return accountSuccess('User created successfully');
  }

  /**
   * The new record is written before the mail goes out and the older ones are removed only
   * after it went out, so a failed mail leaves the account as it was.
   */
  async generateConfirmation(email: string | undefined): Promise<AccountResponse> {
    if (isMissing(email)) return accountFail('Missing email value');
    const sent = accountSuccess('Email send successful');
    const user = await this.usersService.findByEmail(email);
    // The same answer for an unknown address, so it does not tell who has an account.
    if (!user) return sent;

    const confirmation = this.confirmations.create({
      keyValue: randomUUID(),
      expirationTime: new Date(this.clock.now().getTime() + CONFIRMATION_LIFETIME_MS),
      userId: user.id,
    });
    await this.confirmations.insert(confirmation);
    const link = `http://${this.config.serverAddr}:${this.config.frontendPort}/email-verify/${confirmation.keyValue}`;
    try {
      await this.mail.send(activationMail(user.email, user.name, link));
    } catch (error) {
      await this.confirmations.delete({ id: confirmation.id });
      if (error instanceof MailDeliveryError) return accountFail(error.message);
      throw error;
    }
    await this.confirmations.delete({ userId: user.id, id: Not(confirmation.id) });
    return sent;
  }

  async verifyConfirmation(keyValue: string): Promise<AccountResponse> {
    const confirmation = await this.confirmations.findOne({ where: { keyValue }, relations: { user: true } });
    if (!confirmation) return accountSuccess('Invalid Link');
    if (confirmation.expirationTime.getTime() < this.clock.now().getTime()) {
      const email = confirmation.user?.email;
      return email ? accountSuccess('Link Expired', { email }) : accountSuccess('Invalid Link');
    }
    // Single use: the key is consumed in the same transaction that activates the user.
    const consumed = await this.dataSource.transaction(async (manager) => {
      const deleted = await manager.delete(EmailConfirmation, { id: confirmation.id });
      if (!deleted.affected) return false;
      await manager.update(User, { id: confirmation.userId }, { isActive: true });
      return true;
    });
    return consumed ? accountSuccess('Email Verified') : accountSuccess('Invalid Link');
  }

  async generateOtp(identifier: string | undefined): Promise<AccountResponse> {
    const user = await this.usersService.findByEmailOrName(identifier);
    if (!user) return accountFail("Username / Email doesn't exist");
    const otp = await otpFor(user.otpSecretKey, this.clock.now());
    try {
      await this.mail.send(otpMail(user.email, user.name, otp));
    } catch (error) {
      if (error instanceof MailDeliveryError) return accountFail(error.message);
      throw error;
    }
    return accountSuccess('Otp Send Successful');
  }

  async verifyOtp(identifier: string | undefined, otp: string | undefined): Promise<AccountResponse> {
    const user = await this.usersService.findByEmailOrName(identifier);
    if (!user || isMissing(otp)) return accountFail("Username / Email doesn't exist");
    if (!(await this.checkOtp(user, otp))) return accountFail('Invalid OTP');
    return accountSuccess('OTP Verified');
  }

  async newPassword(
    password: string | undefined,
    identifier: string | undefined,
    otp: string | undefined,
  ): Promise<AccountResponse> {
    if (!isMissing(password) && !this.isStrongPassword(password))
      return accountFail('Choose a strong password');
    const user =
      isMissing(password) || isMissing(otp) ? null : await this.usersService.findByEmailOrName(identifier);
    if (!user || isMissing(password) || isMissing(otp)) return accountFail('Password Change Unsuccessful');
    if (!(await this.checkOtp(user, otp))) return accountFail('Invalid OTP');

    const hash = await this.hasher.hash(password);
    // A new secret makes the used OTP worthless; every session of the old password ends.
    await this.dataSource.transaction(async (manager) => {
      await manager.update(
        User,
        { id: user.id },
        { password: hash, otpSecretKey: newOtpSecret(), otpFailedAttempts: 0 },
      );
      await manager.delete(UserLoginToken, { userId: user.id });
    });
    return accountSuccess('Password Change Successful');
  }

  /**
   * Every check first claims one of the user's attempts in a single conditional UPDATE, so
   * parallel guesses cannot exceed the budget; the last failure replaces the secret.
   */
  private async checkOtp(user: User, otp: string): Promise<boolean> {
    const claimed = await this.users
      .createQueryBuilder()
      .update(User)
      .set({ otpFailedAttempts: () => 'otp_failed_attempts + 1' })
      .where('id = :id AND otp_failed_attempts < :max', { id: user.id, max: MAX_OTP_FAILURES })
      .execute();
    if (!claimed.affected) {
      await this.replaceOtpSecret(user.id);
      return false;
    }
    if (await isValidOtp(user.otpSecretKey, otp, this.clock.now())) {
      await this.users.update({ id: user.id }, { otpFailedAttempts: 0 });
      return true;
    }
    await this.users.update(
      { id: user.id, otpFailedAttempts: Not(LessThan(MAX_OTP_FAILURES)) },
      { otpSecretKey: newOtpSecret(), otpFailedAttempts: 0 },
    );
    return false;
  }

  private async replaceOtpSecret(userId: number): Promise<void> {
    await this.users.update({ id: userId }, { otpSecretKey: newOtpSecret(), otpFailedAttempts: 0 });
  }

  private isStrongPassword(password: string): boolean {
    return fitsBcrypt(password) && this.config.passwordPattern.test(password);
  }
}

/** The spec has no rule for names; these bounds keep them storable and printable. */
function isAcceptableUsername(username: string): boolean {
  return (
    username.length <= MAX_USERNAME_LENGTH &&
    username.trim() === username &&
    !/[\p{Cc}\p{Cf}]/u.test(username)
  );
}
