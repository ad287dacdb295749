import { Inject, Injectable, OnApplicationBootstrap, Logger } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, Repository } from 'typeorm';
import { UserLoginToken } from '../auth/user-login-token.entity';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { identityKey } from './identity-key';
import { User } from './user.entity';

@Injectable()
export class UsersService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Users');
  /** SVC_ADMIN_EMAILS as keys, compared like every other email. */
  private readonly adminKeys: Set<string>;

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.adminKeys = new Set(config.adminEmails.map(identityKey));
  }

  /** The spec's lookup: by email first, then by name; one indexed query for both. */
  async findByEmailOrName(identifier: string | undefined): Promise<User | null> {
    if (!identifier) return null;
    const key = identityKey(identifier);
    const found = await this.users.find({ where: [{ emailKey: key }, { nameKey: key }], take: 2 });
    return found.find((user) => user.emailKey === key) ?? found[0] ?? null;
  }

  findByEmail(email: string, manager: EntityManager = this.users.manager): Promise<User | null> {
    return manager.findOneBy(User, { emailKey: identityKey(email) });
  }

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
    await manager.update(User, { id: user.id }, { password: null });
    await manager.delete(UserLoginToken, { userId: user.id });
    return true;
  }

  /** Admins named in SVC_ADMIN_EMAILS are seeded at start-up. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.adminKeys.size === 0) return;
    const promoted = await this.users.findBy({ emailKey: In([...this.adminKeys]), isAdmin: false });
    let cleared = 0;
    for (const user of promoted) {
      await this.dataSource.transaction(async (manager) => {
        await manager.update(User, { id: user.id, isAdmin: false }, { isAdmin: true });
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
}
