import { Entity, PrimaryColumn } from 'typeorm';

/** A target attached to a session; both foreign keys cascade on delete. */
@Entity('session_targets')
export class SessionTarget {
  @PrimaryColumn({ name: 'session_id', type: 'int' })
  sessionId!: number;

  @PrimaryColumn({ name: 'target_id', type: 'int' })
  targetId!: number;
}
