import { Controller, Get, Query } from '@nestjs/common';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../common/decorators';
import { success } from '../common/envelopes';
import { AUDIT_ACTIONS, AuditEntry } from './audit-entry.entity';
import { AuditLog } from './audit-log.service';
import type { AuditFilter } from './audit-log.service';
import { AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT, ParseAuditQueryPipe, SUBJECT_MAX_LENGTH } from './audit-query';
import { AuditEntryView, AuditPage } from './dto/audit.dto';

@ApiTags('audit')
@Controller('audit')
export class AuditController {
  constructor(private readonly audit: AuditLog) {}

  @AdminRoute({
    summary: 'The audit log, newest first (admins)',
    description:
      'One entry per decision and change of power, hash-chained; `svc-admin audit verify` checks the chain. ' +
      '400 with `errors` naming each malformed or repeated parameter.',
    data: AuditPage,
    fails: { 400: ['Invalid query parameters'] },
  })
  @ApiQuery({ name: 'action', required: false, enum: [...AUDIT_ACTIONS] })
  @ApiQuery({ name: 'subject', required: false, schema: { type: 'string', maxLength: SUBJECT_MAX_LENGTH } })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, default: AUDIT_DEFAULT_LIMIT },
    description: `Above ${AUDIT_MAX_LIMIT} counts as ${AUDIT_MAX_LIMIT}`,
  })
  @ApiQuery({ name: 'offset', required: false, schema: { type: 'integer', minimum: 0, default: 0 } })
  @Get()
  async list(
    @Query(ParseAuditQueryPipe) filter: AuditFilter,
  ): Promise<{ status: 'success'; data: AuditPage }> {
    const { total, entries } = await this.audit.list(filter);
    return success({ total, limit: filter.limit, offset: filter.offset, entries: entries.map(toView) });
  }
}

function toView(entry: AuditEntry): AuditEntryView {
  return {
    id: entry.id,
    seq: entry.seq,
    at: entry.at,
    actor: entry.actor,
    actor_user_id: entry.actorUserId,
    action: entry.action,
    subject: entry.subject,
    details: JSON.parse(entry.details) as Record<string, unknown>,
    prev_hash: entry.prevHash,
    hash: entry.hash,
  };
}
