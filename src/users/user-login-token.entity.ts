import { Column, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { User } from './user.entity';

/** One row per issued JWT; logging out deletes it. Keeps a SHA-256 of the token, never the token. */
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

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;
}
