import { Inject, Injectable } from '@nestjs/common';
import { serviceLink } from '../account/activation-link';
import { AuditLog } from '../audit/audit-log.service';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { databaseLabel } from '../database/database-label';
import { Transactions } from '../database/transactions';
import { mailJob } from '../mail/mail.service';
import { OutboxRepository } from '../outbox/outbox.repository';
import { PASSWORD_RESET_PATH } from '../users/account-paths';
import { identityKey } from '../users/identity-key';
import { UsersRepository } from '../users/users.repository';
import { type RoleChange, UnknownEmailError } from '../users/users.service';
import { secondFactorResetMail } from './mail-templates';
import { SecondFactorRepository } from './second-factor.repository';

/**
 * svc-admin second-factor reset: an owner who lost the authenticator (and the recovery codes)
 * gets password-only login back. The TOTP (on or pending) and the recovery codes are removed,
 * every session of the account ends, an audit entry records it and the owner's mail is queued
 * in the outbox, in one transaction (svc-admin sends no mail: an API process works the job).
 */
@Injectable()
export class SecondFactorReset {
  private readonly database: string;
  private readonly resetLink: string;

  constructor(
    private readonly factors: SecondFactorRepository,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly outbox: OutboxRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.database = databaseLabel(config.database);
    // No server listens here: the link names the configured address and port.
    this.resetLink = serviceLink(config, PASSWORD_RESET_PATH, () => undefined);
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
      const now = this.clock.now();
      await this.outbox.insert(manager, mailJob(secondFactorResetMail(user.email, now, this.resetLink), now));
      return true;
    });
    return changed ? 'changed' : 'unchanged';
  }
}
