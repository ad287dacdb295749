import { HttpStatus, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { AccountResponse, accountFail, accountSuccess } from '../common/envelopes';
import { isMissing } from '../common/request-params';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { isDuplicateKeyError } from '../database/integrity-error';
import { Transactions } from '../database/transactions';
import { MailService } from '../mail/mail.service';
import { Outbox } from '../outbox/outbox.service';
import { PASSWORD_RESET_PATH } from '../users/account-paths';
import { identityKey, MAX_IDENTITY_KEY_LENGTH, storedEmail } from '../users/identity-key';
import { mailboxOf } from '../users/mailbox';
import { UsersRepository } from '../users/users.repository';
import type { User } from '../users/user.entity';
import { UsersService } from '../users/users.service';
import { AccountRepository } from './account.repository';
import { EMAIL_CLAIM_PATH, EMAIL_VERIFY_PATH, serviceLink } from './activation-link';
import { ListedAdminGrants } from './listed-admin-grants';
import {
  accountFailureKey,
  MAILBOX_LIMIT,
  mailboxKey,
  RateLimiter,
  type Taken,
} from '../rate-limit/rate-limiter';
import { accountLockedMail, activationMail, otpMail, passwordToSetMail } from './mail-templates';
import { newOtpSecret } from './otp';
import { OtpService } from './otp.service';
import { fitsBcrypt, PasswordHasher } from './password-hasher.service';

const CONFIRMATION_LIFETIME_MS = 60 * 60 * 1000;
const MAX_USERNAME_LENGTH = 64;
const MAX_EMAIL_LENGTH = 254;

export interface RegistrationParams {
  username?: string;
  email?: string;
  password?: string;
  confirmPassword?: string;
}

/** The two actions of an activation mail: confirm the address, or claim it (see confirmEmail). */
export type ConfirmationAction = 'confirm' | 'claim';

/** A link record to mail if its address has an inactive account: `{confirmationId}`. */
const ACTIVATION_MAIL = 'activation-mail';
/** Written by versions before links were by address: `{email}`; see upgradeActivationRequest. */
const ACTIVATION_REQUEST = 'activation-request';

/** The account flows of the spec, with its messages and check orders. */
@Injectable()
export class AccountService implements OnModuleInit {
  private readonly logger = new Logger('Accounts');

  constructor(
    private readonly accounts: AccountRepository,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly usersService: UsersService,
    private readonly otps: OtpService,
    private readonly hasher: PasswordHasher,
    private readonly mail: MailService,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly adapterHost: HttpAdapterHost,
    private readonly limiter: RateLimiter,
    private readonly grants: ListedAdminGrants,
  ) {}

  onModuleInit(): void {
    this.outbox.handle(ACTIVATION_MAIL, (payload) => this.sendActivation(payload));
    this.outbox.handle(
      ACTIVATION_REQUEST,
      (payload, manager) => this.upgradeActivationRequest(payload, manager),
      {
        inTransaction: true,
      },
    );
  }

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
    const emailKey = identityKey(email);
    // The length bound keeps an operator's own EMAIL_PATTERN away from huge inputs.
    if (
      email.length > MAX_EMAIL_LENGTH ||
      emailKey.length > MAX_IDENTITY_KEY_LENGTH ||
      !this.config.emailPattern.test(email)
    ) {
      return accountFail('Choose a valid email');
    }
    if (!this.isStrongPassword(password)) return accountFail('Choose a strong password');
    const nameKey = identityKey(username);
    if (!isAcceptableUsername(username) || nameKey.length > MAX_IDENTITY_KEY_LENGTH) {
      return accountFail('Choose a valid username');
    }
    if (await this.users.nameKeyTaken(nameKey)) return accountFail('Username already exists');
    if (await this.users.emailKeyTaken(emailKey)) return accountFail('Email already exists');

    const user = {
      name: username,
      nameKey,
      email: storedEmail(email),
      emailKey,
      mailbox: mailboxOf(email),
      password: await this.hasher.hash(password),
      isActive: false,
      // SVC_ADMIN_EMAILS names admins whether they registered before the start or after it.
      isAdmin: this.usersService.isListedAdmin(email),
      otpSecretKey: newOtpSecret(),
      createdAt: this.clock.now(),
    };
    try {
      // An admin by the setting is one with the audit entry that says so, or not at all.
      await this.transactions.run(async (manager) => {
        const id = await this.users.insert(user, manager);
        if (user.isAdmin) await this.grants.record(manager, { id, email: user.email });
      });
    } catch (error) {
      // Two registrations raced past the checks above; the unique key indexes decided.
      if (!isDuplicateKeyError(error)) throw error;
      if (await this.users.nameKeyTaken(nameKey)) return accountFail('Username already exists');
      if (await this.users.emailKeyTaken(emailKey)) return accountFail('Email already exists');
      // A key the checks cannot see yet (the row that holds it not visible to them): nothing
      // was written, and the client may simply send it again, so not a 500.
      this.logger.warn(`Registration refused by a unique key the checks did not find: ${errorText(error)}`);
      throw new ApiError(HttpStatus.SERVICE_UNAVAILABLE, 'Service unavailable');
    }
    return accountSuccess('User created successfully');
  }

  /**
   * The same work for every address, known or not, active or not: the request writes a link
   * record for the address and an outbox job, and the worker (sendActivation) makes the same
   * reads and the same two writes for every job. Only whether a mail goes out depends on the
   * account (see docs/decisions/activation-links-by-address.md).
   */
  async generateConfirmation(email: string | undefined): Promise<AccountResponse> {
    if (isMissing(email)) return accountFail('Missing email value');
    const emailKey = identityKey(email);
    // No account has a longer address or key; such a request is not worth a row.
    if (email.length <= MAX_EMAIL_LENGTH && emailKey.length <= MAX_IDENTITY_KEY_LENGTH) {
      await this.transactions.run((manager) => this.issueLink(manager, emailKey));
      this.outbox.nudge();
    }
    return accountSuccess('Email send successful');
  }

  /** A new link record for the address and the job that mails it, in the caller's transaction. */
  private async issueLink(manager: EntityManager, emailKey: string): Promise<void> {
    const confirmationId = await this.accounts.insertConfirmation(manager, {
      keyValue: randomUUID(),
      emailKey,
      expirationTime: new Date(this.clock.now().getTime() + CONFIRMATION_LIFETIME_MS),
    });
    await this.outbox.enqueue(manager, ACTIVATION_MAIL, { confirmationId });
  }

  /**
   * In the outbox worker, for every job alike: the same three reads, the same mail built, and
   * the mail handed to the mail thread without waiting, with `deliver` true only if the link
   * is still its address's newest and the address has an account that is not active. So the
   * job is deleted at the same moment whatever the answer, and nothing on the event loop
   * waits for the SMTP server.
   */
  private async sendActivation(payload: unknown): Promise<void> {
    const { confirmationId } = payload as { confirmationId?: unknown };
    const confirmation =
      typeof confirmationId === 'number' ? await this.accounts.findConfirmationById(confirmationId) : null;
    // Used, or swept since: nothing to mail.
    if (!confirmation) return;
    const newest = await this.accounts.isNewest(confirmation);
    const account = await this.users.activationState(confirmation.emailKey);
    const key = encodeURIComponent(confirmation.keyValue);
    const links = {
      confirm: this.link(`${EMAIL_VERIFY_PATH}/${key}`),
      claim: this.link(`${EMAIL_CLAIM_PATH}/${key}`),
    };
    // An active account gets no link: its owner did not ask for one, and it would change nothing.
    const deliver = newest && account !== null && !account.isActive;
    this.mail.handOff(activationMail(account?.email ?? confirmation.emailKey, links), deliver);
  }

  /** A job written before links were by address (payload `{email}`): a request like any other. */
  private async upgradeActivationRequest(payload: unknown, manager: EntityManager): Promise<void> {
    const { email } = payload as { email?: unknown };
    if (typeof email !== 'string') return;
    const emailKey = identityKey(email);
    if (emailKey.length <= MAX_IDENTITY_KEY_LENGTH) await this.issueLink(manager, emailKey);
  }

  /** The spec's answer; see confirmEmail for what the confirmation did. */
  async verifyConfirmation(keyValue: string): Promise<AccountResponse> {
    return (await this.confirmEmail(keyValue, 'confirm')).answer;
  }

  /** The claim link's answer: the owner secures an address someone else may have registered. */
  async verifyClaim(keyValue: string): Promise<AccountResponse> {
    return (await this.confirmEmail(keyValue, 'claim')).answer;
  }

  /**
   * Single use: the key is consumed in the same transaction that activates the account, with
   * the spec's answers for both actions of the activation mail. `confirm` keeps the password
   * chosen at registration. `claim` (the mail's "I did not register" link, every confirmation
   * with ACCOUNT_CONFIRMATION=claim, and every admin address) trusts only the mailbox: a
   * password not set through a mailed OTP is cleared and its tokens revoked (see
   * UsersService.dropUnprovenPassword), and the owner is told by mail (and by the page,
   * through `passwordToSet`) how to set one. A link of an account already active changes nothing.
   */
  async confirmEmail(
    keyValue: string,
    action: ConfirmationAction,
  ): Promise<{ answer: AccountResponse; passwordToSet: boolean }> {
    const invalid = { answer: accountSuccess('Invalid Link'), passwordToSet: false };
    const confirmation = await this.accounts.findConfirmation(keyValue);
    // A link replaced by a newer one of its address is dead, as if it had been deleted.
    if (!confirmation || !(await this.accounts.isNewest(confirmation))) return invalid;
    if (confirmation.expirationTime.getTime() < this.clock.now().getTime()) {
      const email = (await this.users.findByEmailKey(confirmation.emailKey))?.email;
      return email ? { answer: accountSuccess('Link Expired', { email }), passwordToSet: false } : invalid;
    }
    const outcome = await this.transactions.run(async (manager) => {
      if (!(await this.accounts.consumeConfirmation(manager, confirmation.id))) return 'used';
      const found = await this.users.findByEmailKey(confirmation.emailKey, manager);
      if (!found) return 'used';
      // Serialises with promotion and other confirmations of this user across processes.
      await this.users.lockUser(manager, found.id);
      const user = await this.users.findById(found.id, manager);
      if (!user || user.isActive) return 'used';
      await this.users.markEmailConfirmed(manager, user.id);
      await this.accounts.deleteConfirmationsOf(manager, confirmation.emailKey);
      if (!this.isClaim(action, user)) return 'verified';
      if (!(await this.usersService.dropUnprovenPassword(manager, user))) return 'verified';
      await this.mail.queue(manager, passwordToSetMail(user.email, this.link(PASSWORD_RESET_PATH)));
      return 'password-cleared';
    });
    if (outcome === 'used') return invalid;
    if (outcome === 'password-cleared') this.outbox.nudge();
    return { answer: accountSuccess('Email Verified'), passwordToSet: outcome === 'password-cleared' };
  }

  /**
   * Admin power never attaches to a password the mailbox's owner has not proved, whatever the
   * setting: the role is read from the row locked by the confirmation.
   */
  private isClaim(action: ConfirmationAction, user: User): boolean {
    return (
      action === 'claim' || this.config.accountConfirmation === 'claim' || this.usersService.isAdmin(user)
    );
  }

  async generateOtp(identifier: string | undefined): Promise<AccountResponse> {
    const user = await this.usersService.findByEmailOrName(identifier);
    if (!user) return accountFail("Username / Email doesn't exist");
    const mailed = await this.takeOtpMail(user);
    if (mailed === 'inbox full') return accountSuccess('Otp Send Successful');
    try {
      // The OTP and its mail commit together; past the issue bounds neither is written.
      await this.transactions.run(async (manager) => {
        // The pending code again while there is one (a stranger's request cannot kill it).
        const issued = await this.otps.issue(manager, user.id);
        await this.mail.queue(manager, otpMail(user.email, issued.otp, issued));
      });
    } catch (error) {
      if (mailed) await this.limiter.giveBack(mailed).catch(() => undefined);
      throw error;
    }
    this.outbox.nudge();
    return accountSuccess('Otp Send Successful');
  }

  /**
   * One OTP mail on the mailbox the account's address reaches, counted as activation mails
   * are (10 per 15 minutes whatever the +tags, names and addresses asking): past it the answer
   * is the same and nothing is issued or mailed, so the bound tells nobody which accounts
   * share an inbox, and no code is made that nobody receives. Off with RATE_LIMIT=off.
   */
  private async takeOtpMail(user: User): Promise<Taken | null | 'inbox full'> {
    if (!this.config.rateLimit) return null;
    const taken = await this.limiter.tryTake(
      `mail:otp:${mailboxKey(user.mailbox ?? user.email)}`,
      MAILBOX_LIMIT,
    );
    return taken ?? 'inbox full';
  }

  async verifyOtp(identifier: string | undefined, otp: string | undefined): Promise<AccountResponse> {
    const user = await this.usersService.findByEmailOrName(identifier);
    if (!user || isMissing(otp)) return accountFail("Username / Email doesn't exist");
    if (!(await this.otps.check(user.id, otp))) return accountFail('Invalid OTP');
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
    const checked = await this.otps.check(user.id, otp);
    if (!checked) return accountFail('Invalid OTP');

    const hash = await this.hasher.hash(password);
    // The OTP is consumed by the same conditional write that stores the password, so one
    // code changes it once however many requests carry it; every old session ends, and a
    // lock from failed logins is lifted (the owner proved the mailbox).
    const changed = await this.transactions.run(async (manager) => {
      const changes = { password: hash, passwordSetViaOtp: true, lockedAt: null };
      if (!(await this.otps.consume(manager, user.id, checked, changes))) return false;
      await this.users.revokeAllTokens(manager, user.id);
      return true;
    });
    if (!changed) return accountFail('Invalid OTP');
    // The failures that locked the account are forgotten with it. The password is changed
    // already: a store that cannot answer leaves the count to age out of its hour.
    await this.limiter.clear(accountFailureKey(user.id)).catch(() => undefined);
    return accountSuccess('Password Change Successful');
  }

  /**
   * Locks the account past the bound on failed logins: login refuses every password until
   * the owner sets a new one through the OTP mail (newPassword). Conditional, so of many
   * requests at once, in any process, one locks it and queues the one mail to its owner, in
   * the same transaction.
   */
  async lockAccount(userId: number): Promise<void> {
    const locked = await this.transactions.run(async (manager) => {
      if (!(await this.users.lockIfUnlocked(manager, userId, this.clock.now()))) return false;
      const user = await this.users.findById(userId, manager);
      if (user) await this.mail.queue(manager, accountLockedMail(user.email, this.link(PASSWORD_RESET_PATH)));
      return true;
    });
    if (locked) this.outbox.nudge();
  }

  /** A link to a page of the service, as the mails give it (see serviceLink). */
  link(path: string): string {
    return serviceLink(this.config, path, () => this.listeningPort());
  }

  /** The port the HTTP server listens on, once it does (PORT=0 lets the system choose one). */
  private listeningPort(): number | undefined {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as
      { address?: () => AddressInfo | string | null } | undefined;
    const address = server?.address?.();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  /** The register form's rule for a new password (also the password change's). */
  isStrongPassword(password: string): boolean {
    return fitsBcrypt(password) && this.config.passwordPattern.test(password);
  }
}

/**
 * Letters (with their combining marks, so a decomposed é is one), digits and `._-`, at most
 * 64 characters: a name is shown to others and must not read as a sentence or a link.
 * Names registered before this rule keep working; only new registrations are checked.
 */
const USERNAME_SHAPE = /^[\p{L}\p{M}\p{Nd}._-]+$/u;

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

function isAcceptableUsername(username: string): boolean {
  return username.length <= MAX_USERNAME_LENGTH && USERNAME_SHAPE.test(username);
}
