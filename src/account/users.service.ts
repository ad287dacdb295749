import { Inject, Injectable, OnApplicationBootstrap, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { User } from './user.entity';

@Injectable()
export class UsersService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Users');

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The spec's lookup: by email first, then by name. */
  async findByEmailOrName(identifier: string | undefined): Promise<User | null> {
    if (!identifier) return null;
    return (await this.findByEmail(identifier)) ?? (await this.findByName(identifier));
  }

  findByEmail(email: string): Promise<User | null> {
    return this.users.findOne({ where: { email: normalizeEmail(email) } });
  }

  /** Names compare without case on every database, as MySQL's collation does. */
  findByName(name: string): Promise<User | null> {
    return this.users.createQueryBuilder('user').where('LOWER(user.name) = LOWER(:name)', { name }).getOne();
  }

  /** Admins named in SVC_ADMIN_EMAILS are seeded at start-up. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.config.adminEmails.length === 0) return;
    const result = await this.users.update(
      { email: In(this.config.adminEmails), isAdmin: false },
      { isAdmin: true },
    );
    if (result.affected) this.logger.log(`Promoted ${result.affected} user(s) from SVC_ADMIN_EMAILS`);
  }

  isAdmin(user: Pick<User, 'isAdmin' | 'email'>): boolean {
    return user.isAdmin || this.config.adminEmails.includes(user.email);
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
