import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A user's named workspace; at most one of a user's sessions is active. */
@Entity('sessions')
export class Session {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'user_id', type: 'int' })
  userId!: number;

  @Column({ type: 'varchar', length: 50 })
  name!: string;

  @Column({ type: 'boolean', default: false })
  active!: boolean;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
