import { Column, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { User } from './user.entity';

/**
 * A personal access token for automation (`svcpat_...`). Keeps a SHA-256 of the secret, never
 * the secret, which is shown once at creation. Honoured only while its credential generation is
 * still its user's and it has not expired.
 */
@Entity('personal_access_tokens')
export class AccessToken {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'user_id', type: 'int' })
  userId!: number;

  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  /** Comma-separated, in TOKEN_SCOPES order: `read,upload`. */
  @Column({ type: 'varchar', length: 32 })
  scopes!: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt!: Date;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt!: Date | null;

  /** The user's credential generation when the token was made, under a password login. */
  @Column({ name: 'credential_generation', type: 'int' })
  credentialGeneration!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;
}
