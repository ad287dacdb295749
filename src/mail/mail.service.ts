import { MailerService } from '@nestjs-modules/mailer';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { htmlToText } from './html';

export interface Mail {
  to: string;
  subject: string;
  html: string;
}

export class MailDeliveryError extends Error {}

@Injectable()
export class MailService {
  private readonly logger = new Logger('Mail');

  constructor(
    private readonly mailer: MailerService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

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
      this.logger.error(`Mail "${mail.subject}" to ${mail.to} failed: ${(error as Error).message}`);
      throw new MailDeliveryError('Email could not be sent');
    }
  }
}
