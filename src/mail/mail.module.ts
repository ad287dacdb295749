import { MailerModule, MailerOptions } from '@nestjs-modules/mailer';
import { Global, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MailService } from './mail.service';

/** Bounded waits: a dead SMTP server must fail a request, not hang it. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

@Global()
@Module({
  imports: [
    MailerModule.forRootAsync({
      imports: [],
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): MailerOptions => ({
        // Without SMTP_HOST no mail is sent: MailService writes it to the log instead.
        transport: config.smtp
          ? {
              host: config.smtp.host,
              port: config.smtp.port,
              secure: config.smtp.secure,
              auth: config.smtp.user
                ? { user: config.smtp.user, pass: config.smtp.password ?? '' }
                : undefined,
              ...SMTP_TIMEOUTS,
            }
          : { jsonTransport: true },
        // nodemailer 10 ships types the mailer's own declarations do not line up with.
        defaults: { from: config.mailFrom } as MailerOptions['defaults'],
      }),
    }),
  ],
  providers: [MailService],
  exports: [MailService],
})
export class MailModule {}
