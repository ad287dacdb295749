import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { User } from '../account/user.entity';
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

/** The admin flag as the CLI changes it: by email, compared as registration stores it (trimmed, lower case). */
@Injectable()
export class AdminUsersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  promote(email: string): Promise<RoleChange> {
    return this.setAdmin(email, true);
  }

  demote(email: string): Promise<RoleChange> {
    return this.setAdmin(email, false);
  }

  /** An email in SVC_ADMIN_EMAILS is promoted again at every start, whatever the CLI did. */
  isSeeded(email: string): boolean {
    return this.config.adminEmails.includes(normalize(email));
  }

  async list(): Promise<AdminSummary[]> {
    const admins = await this.users.find({ where: { isAdmin: true }, order: { email: 'ASC' } });
    return admins.map(({ id, name, email }) => ({ id, name, email }));
  }

  private async setAdmin(email: string, isAdmin: boolean): Promise<RoleChange> {
    const user = await this.users.findOneBy({ email: normalize(email) });
    if (!user) throw new UnknownEmailError(email.trim());
    if (user.isAdmin === isAdmin) return 'unchanged';
    await this.users.update({ id: user.id }, { isAdmin });
    return 'changed';
  }
}

const normalize = (email: string): string => email.trim().toLowerCase();
