import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { databaseLabel } from '../database/database-label';
import { Transactions } from '../database/transactions';
import { PASSWORD_RESET_PATH } from './account-paths';
import { identityKey } from './identity-key';
import { AdminSummary, UsersRepository } from './users.repository';
import { User } from './user.entity';

/**
 * Raised for an email that belongs to no user of `database` (named: the command may have been
 * run on another database than the API's); svc-admin turns it into exit status 1.
 */
export class UnknownEmailError extends Error {
  constructor(
    readonly email: string,
    database: string,
  ) {
    super(`No user found with email ${email} in ${database}`);
    this.name = 'UnknownEmailError';
  }
}

/** Raised for svc-admin demote of an address SVC_ADMIN_EMAILS lists; svc-admin exits with status 1. */
export class ListedAdminError extends Error {
  constructor(
    readonly email: string,
    database: string,
  ) {
    super(
      `${email} is an admin through SVC_ADMIN_EMAILS in ${database}: remove the address from the setting to demote it`,
    );
    this.name = 'ListedAdminError';
  }
}

export type RoleChange = 'changed' | 'unchanged';
/** Writes the record of an account change inside the change's transaction (svc-admin's audit entry). */
export type ChangeRecorder = (manager: EntityManager, user: User) => Promise<void>;

/**
 * The audit record of the admin role SVC_ADMIN_EMAILS grants (kept by the account feature,
 * which writes the log; this module writes none).
 */
export interface GrantLog {
  /** A plain read: the log's last word on the user's role is a promote. */
  holds(userId: number): Promise<boolean>;
  /** In the caller's transaction, under the log's lock: a promote, unless the log's last word on the role is one. */
  record(manager: EntityManager, user: Pick<User, 'id' | 'email'>): Promise<void>;
  /** A plain read: the log's last word on the user's role is the setting's grant (`system`, SVC_ADMIN_EMAILS). */
  grantedBySetting(userId: number): Promise<boolean>;
}

/** An admin as svc-admin lists it; `listed` when SVC_ADMIN_EMAILS makes it one (see listedAdmin). */
export type ListedAdminSummary = AdminSummary & { listed: boolean };

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
  /** The database, as the errors of svc-admin's commands name it. */
  private readonly database: string;

  constructor(
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.adminKeys = new Set(config.adminEmails.map(identityKey));
    this.database = databaseLabel(config.database);
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
   * A password chosen before the mailbox owner proved control of the address is never
   * activated: whoever registered the address first would otherwise log in once the owner
   * confirms it (pre-hijack). Such a password is cleared (the spec's "has no password") and
   * every token of it revoked; the owner sets one through the OTP mail. True when it cleared.
   */
  async dropUnprovenPassword(manager: EntityManager, user: User): Promise<boolean> {
    if (user.passwordSetViaOtp || user.password === null) return false;
    await this.users.clearPassword(manager, user.id);
    await this.users.revokeAllTokens(manager, user.id);
    return true;
  }

  /**
   * One rule for every promotion, at start-up (SVC_ADMIN_EMAILS) and by svc-admin: the
   * account's tokens are revoked (they were issued to a non-admin), and a password not set
   * through a mailed OTP is cleared, so the owner sets one before logging in as admin.
   * True when the password was cleared.
   */
  private async applyPromotion(manager: EntityManager, user: User): Promise<boolean> {
    await this.users.revokeAllTokens(manager, user.id);
    return this.dropUnprovenPassword(manager, user);
  }

  /**
   * Admins named in SVC_ADMIN_EMAILS are promoted when the API starts, and every grant of the
   * setting is in the audit log once (`grants`): a listed account promoted now, or an admin
   * whose role the log does not show as granted (made admin by an older version).
   */
  async promoteListedAdmins(grants: GrantLog): Promise<void> {
    if (this.adminKeys.size === 0) return;
    const listed = await this.users.findByEmailKeys([...this.adminKeys]);
    let promoted = 0;
    let cleared = 0;
    for (const user of listed) {
      // Read without the log's lock first: at most starts every grant is recorded already, and
      // a start that locked the chain's hot row would contend with the replicas appending to it.
      if (user.isAdmin && (await grants.holds(user.id))) continue;
      // Counted once committed: a transaction that lost a write conflict runs again.
      const outcome = await this.transactions.run(async (manager) => {
        // The user's row, then the log, as svc-admin promote takes them. Conditional, so of two
        // starts one promotes, revokes and records, and the other finds its record.
        const changed = await this.users.promoteIfNotAdmin(manager, user.id);
        if (!changed) await this.users.lockUser(manager, user.id);
        const passwordCleared = changed && (await this.applyPromotion(manager, user));
        await grants.record(manager, user);
        return { changed, passwordCleared };
      });
      if (!outcome.changed) continue;
      promoted += 1;
      if (outcome.passwordCleared) cleared += 1;
    }
    if (promoted)
      this.logger.log(`Promoted ${promoted} user(s) from SVC_ADMIN_EMAILS; their tokens were revoked`);
    if (cleared) {
      this.logger.warn(
        `${cleared} promoted user(s) had a password not set through the OTP mail; it was cleared, ` +
          `and they set one at ${PASSWORD_RESET_PATH} (generate/otp, then new-password) before logging in`,
      );
    }
  }

  /**
   * svc-admin promote: the same rule as start-up promotion. `record` runs in the change's own
   * transaction, so a change is never made without its audit entry, nor recorded twice.
   */
  async promote(
    email: string,
    record: ChangeRecorder,
  ): Promise<{ change: RoleChange; passwordCleared: boolean }> {
    const user = await this.findOrFail(email);
    let passwordCleared = false;
    const changed = await this.transactions.run(async (manager) => {
      passwordCleared = false;
      if (!(await this.users.promoteIfNotAdmin(manager, user.id))) return false;
      passwordCleared = await this.applyPromotion(manager, user);
      await record(manager, user);
      return true;
    });
    return { change: changed ? 'changed' : 'unchanged', passwordCleared };
  }

  /**
   * SVC_ADMIN_EMAILS makes the user an admin, as the API sees it: svc-admin given the setting
   * judges by it; without it (the setting is often the API's alone), by what the audit log
   * records of the API's grants.
   */
  private async listedAdmin(user: Pick<User, 'id' | 'email'>, grants?: GrantLog): Promise<boolean> {
    if (this.adminKeys.size > 0 || !grants) return this.isListedAdmin(user.email);
    return grants.grantedBySetting(user.id);
  }

  /**
   * The account's tokens end with the role they were issued under. An address listed in
   * SVC_ADMIN_EMAILS (see listedAdmin) is refused: the setting holds that role, and a
   * demotion would change nothing but the log.
   */
  async demote(email: string, record: ChangeRecorder, grants?: GrantLog): Promise<RoleChange> {
    if (await this.listedAdmin(await this.findOrFail(email), grants)) {
      throw new ListedAdminError(email.trim(), this.database);
    }
    return this.changeIf(email, record, async (manager, user) => {
      if (!(await this.users.demoteIfAdmin(manager, user.id))) return false;
      await this.users.revokeAllTokens(manager, user.id);
      return true;
    });
  }

  /** Takes the account out of service: login is refused and every token dies in the same transaction. */
  deactivate(email: string, record: ChangeRecorder): Promise<RoleChange> {
    return this.changeIf(email, record, async (manager, user) => {
      if (!(await this.users.deactivateIfInService(manager, user.id, this.clock.now()))) return false;
      await this.users.revokeAllTokens(manager, user.id);
      return true;
    });
  }

  /** Puts the account back in service; an email never confirmed still has to be. */
  async activate(
    email: string,
    record: ChangeRecorder,
  ): Promise<{ change: RoleChange; emailConfirmed: boolean }> {
    const change = await this.changeIf(email, record, (manager, user) =>
      this.users.reactivateIfDeactivated(manager, user.id),
    );
    return { change, emailConfirmed: (await this.findOrFail(email)).isActive };
  }

  listAdmins(): Promise<AdminSummary[]> {
    return this.users.listAdmins();
  }

  /**
   * svc-admin list: the admins by flag, and those SVC_ADMIN_EMAILS names (see listedAdmin)
   * marked, then the listed users the flag does not show yet (the API counts them as admins,
   * and sets the flag at its next start).
   */
  async listAdminsWithGrants(grants: GrantLog): Promise<ListedAdminSummary[]> {
    const flagged = await this.users.listAdmins();
    const listedUsers = this.adminKeys.size > 0 ? await this.users.findByEmailKeys([...this.adminKeys]) : [];
    const unflagged = listedUsers.filter((user) => !flagged.some((admin) => admin.id === user.id));
    const admins = [...flagged, ...unflagged.map(({ id, name, email }) => ({ id, name, email }))];
    const listed = await Promise.all(admins.map((admin) => this.listedAdmin(admin, grants)));
    return admins.map((admin, index) => ({ ...admin, listed: listed[index] }));
  }

  /** One conditional change and its record in one transaction; 'unchanged' when the condition failed. */
  private async changeIf(
    email: string,
    record: ChangeRecorder,
    change: (manager: EntityManager, user: User) => Promise<boolean>,
  ): Promise<RoleChange> {
    const user = await this.findOrFail(email);
    const changed = await this.transactions.run(async (manager) => {
      if (!(await change(manager, user))) return false;
      await record(manager, user);
      return true;
    });
    return changed ? 'changed' : 'unchanged';
  }

  private async findOrFail(email: string): Promise<User> {
    const user = await this.findByEmail(email);
    if (!user) throw new UnknownEmailError(email.trim(), this.database);
    return user;
  }
}
