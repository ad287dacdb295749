import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../../audit/audit-log.service';

/**
 * An approval stands for an admin's judgement only while they are an admin in service: when
 * svc-admin demotes or deactivates them, their approvals of versions still waiting go, each
 * with an audit entry on its plugin, in the transaction of the change itself. (The quorum
 * also counts only admins in service, so an approval the role change missed counts for nothing.)
 */
@Injectable()
export class PendingApprovals {
  constructor(private readonly audit: AuditLog) {}

  async dropAllOf(manager: EntityManager, userId: number, because: 'demote' | 'deactivate'): Promise<number> {
    const rows = (await manager.query(
      'SELECT a.id AS id, v.plugin_id AS plugin_id, v.version AS version, v.sha256 AS sha256 ' +
        'FROM plugin_version_approvals a JOIN plugin_versions v ON v.id = a.version_id ' +
        "WHERE a.user_id = ? AND v.status = 'pending' ORDER BY a.id",
      [userId],
    )) as Array<{ id: number | string; plugin_id: number | string; version: string; sha256: string | null }>;
    for (const row of rows) {
      await manager.query('DELETE FROM plugin_version_approvals WHERE id = ?', [Number(row.id)]);
      await this.audit.append(manager, {
        actor: 'svc-admin',
        action: 'approval_dropped',
        subject: `plugin:${Number(row.plugin_id)}`,
        details: { version: row.version, sha256: row.sha256, user_id: userId, because },
      });
    }
    return rows.length;
  }
}
