import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { identityKey } from '../account/identity-key';
import { User } from '../account/user.entity';
import { UserLoginToken } from '../auth/user-login-token.entity';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

/** Raised for an email that belongs to no user; the CLI turns it into exit status 1. */
export class UnknownEmailError extends Error {
  constructor(readonly email: string) {
    super(`No user found with email ${email}`);
    this.name = 'UnknownEmailError';
  }
}

export type RoleChange = 'changed' | 'unchanged';

export interface AdminSummary {
  id: number;
  name: string;
  email: string;
}

/** Users as the CLI changes them: found by email, compared by its key as every lookup is. */
@Injectable()
export class AdminUsersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  promote(email: string): Promise<RoleChange> {
    return this.setAdmin(email, true);
  }

  demote(email: string): Promise<RoleChange> {
    return this.setAdmin(email, false);
  }

  /** An email in SVC_ADMIN_EMAILS is promoted again at every start, whatever the CLI did. */
  isSeeded(email: string): boolean {
    return this.config.adminEmails.some((listed) => identityKey(listed) === identityKey(email));
  }

  /** Takes the account out of service: login is refused and every token dies in the same transaction. */
  async deactivate(email: string): Promise<RoleChange> {
    const user = await this.find(email);
    if (user.deactivatedAt) return 'unchanged';
    await this.dataSource.transaction(async (manager) => {
      await manager.update(User, { id: user.id }, { deactivatedAt: this.clock.now() });
      await manager.delete(UserLoginToken, { userId: user.id });
    });
    return 'changed';
  }

  /** Puts the account back in service; an email never confirmed still has to be. */
  async activate(email: string): Promise<{ change: RoleChange; emailConfirmed: boolean }> {
    const user = await this.find(email);
    if (user.deactivatedAt) await this.users.update({ id: user.id }, { deactivatedAt: null });
    return { change: user.deactivatedAt ? 'changed' : 'unchanged', emailConfirmed: user.isActive };
  }

  async list(): Promise<AdminSummary[]> {
    const admins = await this.users.find({ where: { isAdmin: true }, order: { email: 'ASC' } });
    return admins.map(({ id, name, email }) => ({ id, name, email }));
  }

  private async setAdmin(email: string, isAdmin: boolean): Promise<RoleChange> {
    const user = await this.find(email);
    if (user.isAdmin === isAdmin) return 'unchanged';
    await this.users.update({ id: user.id }, { isAdmin });
    return 'changed';
  }

  private async find(email: string): Promise<User> {
    const user = await this.users.findOneBy({ emailKey: identityKey(email) });
    if (!user) throw new UnknownEmailError(email.trim());
    return user;
  }
}
