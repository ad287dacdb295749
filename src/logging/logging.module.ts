import { Global, Module } from '@nestjs/common';
import pino from 'pino';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppLogger } from './app-logger';
import { CENSOR, REDACT_PATHS } from './redaction';

/** Structured JSON logs (pino), secrets redacted wherever they appear in a logged object. */
@Global()
@Module({
  providers: [
    {
      provide: AppLogger,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        new AppLogger(pino({ level: config.logLevel, redact: { paths: REDACT_PATHS, censor: CENSOR } })),
    },
  ],
  exports: [AppLogger],
})
export class LoggingModule {}
