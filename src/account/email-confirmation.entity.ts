import { Column, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { User } from './user.entity';

@Entity('email_confirmation')
export class EmailConfirmation {
  @PrimaryGeneratedColumn()
  id!: number;

  /** A random UUID: the last path segment of the verification link. */
  @Column({ name: 'key_value', type: 'varchar', length: 36 })
  keyValue!: string;

  @Column({ name: 'expiration_time', type: 'datetime', precision: 3 })
  expirationTime!: Date;

  @Column({ name: 'user_id', type: 'int' })
  userId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;
}
