import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { TargetView } from './dto/target.dto';

/** A URL to assess, owned by the user who added it; its parts are parsed once, on creation. */
@Entity('targets')
export class Target {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'user_id', type: 'int' })
  userId!: number;

  @Column({ name: 'target_url', type: 'varchar', length: 2048 })
  targetUrl!: string;

  /** SHA-256 of target_url: the unique key per user, as the URL itself is too long for an index. */
  @Column({ name: 'target_url_hash', type: 'varchar', length: 64 })
  targetUrlHash!: string;

  @Column({ name: 'url_scheme', type: 'varchar', length: 8 })
  urlScheme!: string;

  @Column({ name: 'host_name', type: 'varchar', length: 255 })
  hostName!: string;

  @Column({ name: 'port_number', type: 'int' })
  portNumber!: number;

  @Column({ name: 'host_path', type: 'varchar', length: 2048 })
  hostPath!: string;

  @Column({ type: 'boolean', default: true })
  scope!: boolean;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}

export type { TargetView };

export function toTargetView(target: Target): TargetView {
  return {
    id: target.id,
    target_url: target.targetUrl,
    url_scheme: target.urlScheme,
    host_name: target.hostName,
    port_number: target.portNumber,
    host_path: target.hostPath,
    scope: target.scope,
    created_at: target.createdAt.toISOString(),
    host_ip: null,
    max_user_rank: -1,
    max_owtf_rank: -1,
  };
}
