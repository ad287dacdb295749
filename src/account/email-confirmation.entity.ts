import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * An activation link, written for the address asked about whether or not an account has it
 * (so the work of `generate/confirm_email` does not depend on that; see
 * docs/decisions/activation-links-by-address.md). Only the newest record of an address is
 * live, and it is mailed only to an inactive account of that address.
 */
@Entity('email_confirmation')
export class EmailConfirmation {
  @PrimaryGeneratedColumn()
  id!: number;

  /** A random UUID: the last path segment of the verification link. */
  @Column({ name: 'key_value', type: 'varchar', length: 36 })
  keyValue!: string;

  /** identityKey of the address asked about, as `users.email_key`. */
  @Column({ name: 'email_key', type: 'varchar', length: 255 })
  emailKey!: string;

  @Column({ name: 'expiration_time', type: 'datetime', precision: 3 })
  expirationTime!: Date;
}
