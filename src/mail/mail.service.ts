import { MailerService } from '@nestjs-modules/mailer';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Outbox } from '../outbox/outbox.service';
import { htmlToText } from './html';

export interface Mail {
  to: string;
  subject: string;
  html: string;
}

export class MailDeliveryError extends Error {}

const MAIL_JOB = 'mail';

@Injectable()
export class MailService implements OnModuleInit {
  private readonly logger = new Logger('Mail');

  constructor(
    private readonly mailer: MailerService,
    private readonly outbox: Outbox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.outbox.handle(MAIL_JOB, (mail) => this.send(mail as Mail));
  }

  /**
   * Queues the mail in the caller's transaction: it goes out once that commits (the caller
   * nudges the outbox), and an SMTP outage delays it instead of losing it.
   */
  queue(manager: EntityManager, mail: Mail): Promise<void> {
    return this.outbox.enqueue(manager, MAIL_JOB, mail);
  }

  /** Sends the mail, or without SMTP writes its text to the log and stdout for the operator. */
  async send(mail: Mail): Promise<void> {
    const text = htmlToText(mail.html);
    if (!this.config.smtp) {
      const block = [
        `----- mail to ${mail.to} -----`,
        `Subject: ${mail.subject}`,
        '',
        text,
        '-----',
        '',
      ].join('\n');
      this.logger.log(`No SMTP_HOST configured; mail "${mail.subject}" to ${mail.to} printed to stdout`);
      process.stdout.write(block);
      return;
    }
    try {
      await this.mailer.sendMail({ to: mail.to, subject: mail.subject, html: mail.html, text });
    } catch (error) {
      // A warning: the outbox tries again, and logs an error only when it gives up.
      this.logger.warn(`Mail "${mail.subject}" to ${mail.to} failed: ${(error as Error).message}`);
      throw new MailDeliveryError('Email could not be sent');
    }
  }
}
