import { Inject, Injectable } from '@nestjs/common';
import { AuditLog } from '../audit/audit-log.service';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { databaseLabel } from '../database/database-label';
import { Transactions } from '../database/transactions';
import { identityKey } from '../users/identity-key';
import { UsersRepository } from '../users/users.repository';
import { type RoleChange, UnknownEmailError } from '../users/users.service';
import { SecondFactorRepository } from './second-factor.repository';

/**
 * svc-admin second-factor reset: an owner who lost the authenticator (and the recovery codes)
 * gets password-only login back. The TOTP (on or pending) and the recovery codes are removed,
 * every session of the account ends, and an audit entry records it, in one transaction.
 */
@Injectable()
export class SecondFactorReset {
  private readonly database: string;

  constructor(
    private readonly factors: SecondFactorRepository,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.database = databaseLabel(config.database);
  }

  async reset(email: string): Promise<RoleChange> {
    const user = await this.users.findByEmailKey(identityKey(email));
    if (!user) throw new UnknownEmailError(email.trim(), this.database);
    const changed = await this.transactions.run(async (manager) => {
      await this.users.lockUser(manager, user.id);
      if (!(await this.factors.remove(manager, user.id))) return false;
      await this.users.revokeAllTokens(manager, user.id);
      await this.audit.append(manager, {
        actor: 'svc-admin',
        action: 'second_factor_reset',
        subject: `user:${user.id}`,
        details: { email: email.trim() },
      });
      return true;
    });
    return changed ? 'changed' : 'unchanged';
  }
}
