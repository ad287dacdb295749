import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { persistedValue } from '../database/persisted-value';
import { EmailConfirmation } from './email-confirmation.entity';

/** Every query on `email_confirmation`. The users' own table is the users module's. */
@Injectable()
export class AccountRepository {
  constructor(
    @InjectRepository(EmailConfirmation) private readonly confirmations: Repository<EmailConfirmation>,
  ) {}

  findConfirmation(keyValue: string): Promise<EmailConfirmation | null> {
    return this.confirmations.findOneBy({ keyValue });
  }

  findConfirmationById(id: number): Promise<EmailConfirmation | null> {
    return this.confirmations.findOneBy({ id });
  }

  /**
   * A plain insert: earlier records of the address are not touched here (see isNewest), so
   * this write is the same whatever was asked before.
   */
  async insertConfirmation(
    manager: EntityManager,
    confirmation: Omit<EmailConfirmation, 'id'>,
  ): Promise<number> {
    const result = await manager.insert(EmailConfirmation, confirmation);
    return Number((result.identifiers[0] as { id: number | string }).id);
  }

  /** An address has one live link, its newest: a new one replaces the earlier ones. */
  async isNewest(confirmation: EmailConfirmation): Promise<boolean> {
    const newest = await this.confirmations
      .createQueryBuilder('c')
      .select('c.id', 'id')
      .where('c.email_key = :emailKey', { emailKey: confirmation.emailKey })
      .orderBy('c.expiration_time', 'DESC')
      .addOrderBy('c.id', 'DESC')
      .limit(1)
      .getRawOne<{ id: number | string }>();
    return newest !== undefined && Number(newest.id) === confirmation.id;
  }

  /** Deletes the record: true for the one request that did, so a link is used once. */
  async consumeConfirmation(manager: EntityManager, id: number): Promise<boolean> {
    const deleted = await manager.delete(EmailConfirmation, { id });
    return Boolean(deleted.affected);
  }

  /** Once the address is confirmed, none of its links is of use. */
  async deleteConfirmationsOf(manager: EntityManager, emailKey: string): Promise<void> {
    await manager.delete(EmailConfirmation, { emailKey });
  }

  /** Records that expired before `before`; returns how many went. */
  async deleteExpired(before: Date): Promise<number> {
    const deleted = await this.confirmations
      .createQueryBuilder()
      .delete()
      .from(EmailConfirmation)
      .where('expiration_time < :before', {
        before: persistedValue(this.confirmations, 'expirationTime', before),
      })
      .execute();
    return deleted.affected ?? 0;
  }
}
