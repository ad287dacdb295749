import { Global, Module } from '@nestjs/common';
import { MailService } from './mail.service';

/** Mail goes out through MailService's thread (nodemailer runs there; see mail-thread.ts). */
@Global()
@Module({
  providers: [MailService],
  exports: [MailService],
})
export class MailModule {}
