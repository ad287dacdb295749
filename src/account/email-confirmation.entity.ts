import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('email_confirmation')
export class EmailConfirmation {
  @PrimaryGeneratedColumn()
  id!: number;

  /** A random UUID: the last path segment of the verification link. */
  @Column({ name: 'key_value', type: 'varchar', length: 36 })
  keyValue!: string;

  @Column({ name: 'expiration_time', type: 'datetime', precision: 3 })
  expirationTime!: Date;

  /** A user's id; the migrations' foreign key deletes the record with its user. */
  @Column({ name: 'user_id', type: 'int' })
  userId!: number;
}
