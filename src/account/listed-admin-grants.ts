import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service';
import type { AuditAction } from '../audit/audit-entry.entity';
import type { GrantLog } from '../users/users.service';
import type { User } from '../users/user.entity';

/** The entries that change a user's admin role; the newest one is the log's last word on it. */
const ROLE_CHANGES: readonly AuditAction[] = ['promote', 'demote'];

const subjectOf = (userId: number) => `user:${userId}`;

/** What a grant's details name as its source. */
const GRANTED_BY = 'SVC_ADMIN_EMAILS';
const grantSource = (details: string) => (JSON.parse(details) as { granted_by?: unknown }).granted_by;

/**
 * The admin role SVC_ADMIN_EMAILS grants, in the audit log as a `promote` by actor `system`
 * (the service itself), at registration of a listed address and at start-up. Written at most
 * once per grant: checked and appended under the chain's lock, so two replicas starting at
 * once, or a start and a registration, record it once.
 */
@Injectable()
export class ListedAdminGrants implements GrantLog {
  constructor(private readonly audit: AuditLog) {}

  async holds(userId: number): Promise<boolean> {
    return (await this.audit.latestAbout(subjectOf(userId), ROLE_CHANGES))?.action === 'promote';
  }

  async grantedBySetting(userId: number): Promise<boolean> {
    const last = await this.audit.latestAbout(subjectOf(userId), ROLE_CHANGES);
    return last?.action === 'promote' && last.actor === 'system' && grantSource(last.details) === GRANTED_BY;
  }

  async record(manager: EntityManager, user: Pick<User, 'id' | 'email'>): Promise<void> {
    await this.audit.lockChain(manager);
    const last = await this.audit.latestAbout(subjectOf(user.id), ROLE_CHANGES, manager);
    if (last?.action === 'promote') return;
    await this.audit.append(manager, {
      actor: 'system',
      action: 'promote',
      subject: subjectOf(user.id),
      details: { email: user.email, granted_by: GRANTED_BY },
    });
  }
}
