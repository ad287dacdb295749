import { Column, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { User } from './user.entity';

/**
 * One row per issued JWT (a login); logging out, or its owner ending it, deletes it. Keeps a
 * SHA-256 of the token, never the token.
 */
@Entity('user_login_tokens')
export class UserLoginToken {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'user_id', type: 'int' })
  userId!: number;

  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt!: Date;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  /** The user's credential generation as the login read it with the password it checked. */
  @Column({ name: 'credential_generation', type: 'int', default: 0 })
  credentialGeneration!: number;

  /** The last request with the token, to within a minute (see LoginsRepository.noteUse). */
  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt!: Date | null;

  /** The client's address at login, as the trusted-proxy rules give it (clientAddress). */
  @Column({ name: 'client_address', type: 'varchar', length: 64, nullable: true })
  clientAddress!: string | null;

  /** The User-Agent at login, cut to USER_AGENT_MAX_LENGTH characters. */
  @Column({ name: 'user_agent', type: 'varchar', length: 255, nullable: true })
  userAgent!: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;
}
