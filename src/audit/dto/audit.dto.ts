import { ApiProperty } from '@nestjs/swagger';
import { AUDIT_ACTIONS } from '../audit-entry.entity';

/** One audit entry as admins read it: every column, the hash inputs included, so anyone can recompute it. */
export class AuditEntryView {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer', description: 'Position in the chain, from 1' })
  seq!: number;

  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiProperty({ enum: ['user', 'svc-admin', 'system'] })
  actor!: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The acting user when `actor` is `user`' })
  actor_user_id!: number | null;

  @ApiProperty({ enum: [...AUDIT_ACTIONS] })
  action!: string;

  @ApiProperty({
    example: 'plugin:12',
    description: '`plugin:<id>`, `user:<id>`, `configuration` or `manifest-key`',
  })
  subject!: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  details!: Record<string, unknown>;

  @ApiProperty({ description: 'Hash of the entry before; empty for the first' })
  prev_hash!: string;

  @ApiProperty({
    description:
      'sha256 hex of prev_hash followed by the canonical JSON of {seq, at, actor, actor_user_id, action, subject, details}',
  })
  hash!: string;
}

export class AuditPage {
  @ApiProperty({ type: 'integer' })
  total!: number;

  @ApiProperty({ type: 'integer' })
  limit!: number;

  @ApiProperty({ type: 'integer' })
  offset!: number;

  @ApiProperty({ type: [AuditEntryView], description: 'Newest first' })
  entries!: AuditEntryView[];
}
