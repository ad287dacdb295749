import { Module, RequestMethod } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppLogger } from './app-logger';
import { CENSOR, REDACT_PATHS, redactUrl } from './redaction';

/** Structured JSON logs with a request id per request, secrets redacted. */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        // Every request, in the path syntax of Nest 11+ (nestjs-pino 4's default is the older `*`).
        forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
        pinoHttp: {
          level: config.logLevel,
          redact: { paths: REDACT_PATHS, censor: CENSOR },
          // Fastify names each request (src/http/http-adapter.ts); pino-http logs that id.
          genReqId: (request: IncomingMessage) => request.id,
          serializers: {
            req: (request: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({
              id: request.id,
              method: request.method,
              url: redactUrl(request.url),
              remoteAddress: request.remoteAddress,
            }),
            res: (response: { statusCode: number }) => ({ statusCode: response.statusCode }),
          },
        },
      }),
    }),
  ],
  providers: [AppLogger],
  exports: [AppLogger],
})
export class LoggingModule {}
