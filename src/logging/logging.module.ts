import { Global, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppLogger } from './app-logger';
import { createPino } from './log-destination';

/** Structured logs (pino; JSON, or readable lines with LOG_FORMAT=pretty), secrets redacted wherever they appear in a logged object. */
@Global()
@Module({
  providers: [
    {
      provide: AppLogger,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new AppLogger(createPino(config.logLevel, config.logFormat)),
    },
  ],
  exports: [AppLogger],
})
export class LoggingModule {}
