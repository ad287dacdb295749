import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** What the audit log records: decisions about plugins and changes of power. */
export const AUDIT_ACTIONS = [
  'upload',
  'new_version',
  'approve',
  'approval_dropped',
  'reject',
  'delete',
  'manifest_key_change',
  'promote',
  'demote',
  'deactivate',
  'activate',
  'configuration_change',
  'test_run',
  'file_mismatch',
  'token_create',
  'token_revoke',
  'login_end',
  'logout_everywhere',
  'password_change',
  'second_factor_enable',
  'second_factor_disable',
  'second_factor_recovery',
  'second_factor_reset',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who acted: a signed-in user, the svc-admin command line, or the service itself (start-up). */
export type AuditActor = 'user' | 'svc-admin' | 'system';

/**
 * One row of the append-only audit log. Rows are inserted, never updated or deleted (no code
 * path does either); `hash = sha256(prev_hash + canonical row)` chains each to the one before.
 */
@Entity('audit_log')
export class AuditEntry {
  @PrimaryGeneratedColumn()
  id!: number;

  /** 1, 2, 3, ... in chain order; unique, so the chain cannot fork. */
  @Column({ type: 'int' })
  seq!: number;

  /** ISO 8601 text, as hashed: a datetime column would round-trip through time zones. */
  @Column({ type: 'varchar', length: 32 })
  at!: string;

  @Column({ type: 'varchar', length: 16 })
  actor!: AuditActor;

  @Column({ name: 'actor_user_id', type: 'int', nullable: true })
  actorUserId!: number | null;

  @Column({ type: 'varchar', length: 32 })
  action!: AuditAction;

  /** `plugin:<id>`, `user:<id>`, `configuration`, `manifest-key`. */
  @Column({ type: 'varchar', length: 128 })
  subject!: string;

  /** Canonical JSON of an object of strings, numbers, booleans and nulls. */
  @Column({ type: 'text' })
  details!: string;

  @Column({ name: 'prev_hash', type: 'varchar', length: 64 })
  prevHash!: string;

  @Column({ type: 'varchar', length: 64 })
  hash!: string;
}
