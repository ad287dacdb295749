import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Transactions } from '../database/transactions';
import { identityKey } from './identity-key';
import { AdminSummary, UsersRepository } from './users.repository';
import { User } from './user.entity';

/** Raised for an email that belongs to no user; svc-admin turns it into exit status 1. */
export class UnknownEmailError extends Error {
  constructor(readonly email: string) {
    super(`No user found with email ${email}`);
    this.name = 'UnknownEmailError';
  }
}

export type RoleChange = 'changed' | 'unchanged';

/**
 * The rules about users that the API and svc-admin share: how a user is found (by the
 * identity key of an email or a name), who is an admin (the flag, or SVC_ADMIN_EMAILS), and
 * what a change of role or service does to the user's password and tokens.
 */
@Injectable()
export class UsersService {
  private readonly logger = new Logger('Users');
  /** SVC_ADMIN_EMAILS as keys, compared like every other email. */
  private readonly adminKeys: Set<string>;

  constructor(
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.adminKeys = new Set(config.adminEmails.map(identityKey));
  }

  /** The spec's lookup: by email first, then by name; one indexed query for both. */
  async findByEmailOrName(identifier: string | undefined): Promise<User | null> {
    if (!identifier) return null;
    const key = identityKey(identifier);
    const found = await this.users.findByEmailOrNameKey(key);
    return found.find((user) => user.emailKey === key) ?? found[0] ?? null;
  }

  findByEmail(email: string, manager?: EntityManager): Promise<User | null> {
    return this.users.findByEmailKey(identityKey(email), manager);
  }

  /** Listed in SVC_ADMIN_EMAILS: an admin at every start, whatever the flag says. */
  isListedAdmin(email: string): boolean {
    return this.adminKeys.has(identityKey(email));
  }

  isAdmin(user: Pick<User, 'isAdmin' | 'email'>): boolean {
    return user.isAdmin || this.isListedAdmin(user.email);
  }

  /**
   * A password chosen before the mailbox owner proved control must never carry admin
   * rights: whoever registered an admin's address first would otherwise log in as admin once
   * the owner clicks the link. Such a password is cleared (the spec's "has no password")
   * and every token of it revoked; the owner sets one through the OTP mail.
   */
  async dropUnprovenAdminPassword(manager: EntityManager, user: User): Promise<boolean> {
    if (!this.isAdmin(user) || user.passwordSetViaOtp || user.password === null) return false;
    await this.users.clearPassword(manager, user.id);
    await this.users.revokeAllTokens(manager, user.id);
    return true;
  }

  /** Admins named in SVC_ADMIN_EMAILS are promoted when the API starts (not by svc-admin). */
  async promoteListedAdmins(): Promise<void> {
    if (this.adminKeys.size === 0) return;
    const promoted = await this.users.findNonAdminsByEmailKeys([...this.adminKeys]);
    let cleared = 0;
    for (const user of promoted) {
      await this.transactions.run(async (manager) => {
        await this.users.promoteIfNotAdmin(manager, user.id);
        if (await this.dropUnprovenAdminPassword(manager, { ...user, isAdmin: true })) cleared += 1;
      });
    }
    if (promoted.length) this.logger.log(`Promoted ${promoted.length} user(s) from SVC_ADMIN_EMAILS`);
    if (cleared) {
      this.logger.warn(
        `${cleared} promoted user(s) had a password not set through the OTP mail; it was cleared, ` +
          'and they set one with generate/otp and new-password before logging in',
      );
    }
  }

  promote(email: string): Promise<RoleChange> {
    return this.setAdmin(email, true);
  }

  demote(email: string): Promise<RoleChange> {
    return this.setAdmin(email, false);
  }

  /** Takes the account out of service: login is refused and every token dies in the same transaction. */
  async deactivate(email: string): Promise<RoleChange> {
    const user = await this.findOrFail(email);
    if (user.deactivatedAt) return 'unchanged';
    await this.transactions.run(async (manager) => {
      await this.users.setDeactivatedAt(user.id, this.clock.now(), manager);
      await this.users.revokeAllTokens(manager, user.id);
    });
    return 'changed';
  }

  /** Puts the account back in service; an email never confirmed still has to be. */
  async activate(email: string): Promise<{ change: RoleChange; emailConfirmed: boolean }> {
    const user = await this.findOrFail(email);
    if (user.deactivatedAt) await this.users.setDeactivatedAt(user.id, null);
    return { change: user.deactivatedAt ? 'changed' : 'unchanged', emailConfirmed: user.isActive };
  }

  listAdmins(): Promise<AdminSummary[]> {
    return this.users.listAdmins();
  }

  private async setAdmin(email: string, isAdmin: boolean): Promise<RoleChange> {
    const user = await this.findOrFail(email);
    if (user.isAdmin === isAdmin) return 'unchanged';
    await this.users.setAdmin(user.id, isAdmin);
    return 'changed';
  }

  private async findOrFail(email: string): Promise<User> {
    const user = await this.findByEmail(email);
    if (!user) throw new UnknownEmailError(email.trim());
    return user;
  }
}
