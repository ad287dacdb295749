import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
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

  /** A user has one live activation link: a new one replaces the earlier ones. */
  async replaceConfirmation(
    manager: EntityManager,
    confirmation: Omit<EmailConfirmation, 'id'>,
  ): Promise<void> {
    await manager.delete(EmailConfirmation, { userId: confirmation.userId });
    await manager.insert(EmailConfirmation, confirmation);
  }

  /** Deletes the record: true for the one request that did, so a link is used once. */
  async consumeConfirmation(manager: EntityManager, id: number): Promise<boolean> {
    const deleted = await manager.delete(EmailConfirmation, { id });
    return Boolean(deleted.affected);
  }
}
