import { INestApplication, ValidationPipe } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import type { AppConfig } from './config/app-config';
import { APP_CONFIG } from './config/config.module';
import { validationFailure } from './common/validation';
import { setupOpenApi } from './openapi/openapi';

export const API_PREFIX = 'api/v1';
/** No endpoint takes more than small forms; uploads have their own streamed limit. */
const BODY_LIMIT = '100kb';

/** What the HTTP entrypoint and the e2e tests both apply to the app, so they test the same thing. */
export function configureApp(app: INestApplication): void {
  const express = app as NestExpressApplication;
  const config = app.get<AppConfig>(APP_CONFIG);
  express.disable('x-powered-by');
  // Hashing every body for an ETag cost a fifth of the catalogue's throughput; no client here
  // revalidates with If-None-Match.
  express.set('etag', false);
  // The API speaks plain HTTP unless a proxy adds TLS; upgrading the docs page's own requests
  // to https would break the Swagger UI there.
  express.use(helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }));
  // Answers carry tokens, source code and personal data; no cache, shared or private, keeps one.
  express.use((_request: Request, response: Response, next: NextFunction) => {
    response.setHeader('Cache-Control', 'no-store');
    next();
  });
  if (config.corsOrigins.length > 0) {
    express.enableCors({ origin: config.corsOrigins, exposedHeaders: ['X-Request-Id'] });
  }
  express.useBodyParser('json', { limit: BODY_LIMIT });
  express.useBodyParser('urlencoded', { limit: BODY_LIMIT, extended: false });
  app.setGlobalPrefix(API_PREFIX);
  // Request DTOs are validated wherever they are, @Args() included; unknown arguments are dropped,
  // each argument stops at its first failure, and a failure keeps its route's message (FailWith).
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: false,
      transform: true,
      validateCustomDecorators: true,
      stopAtFirstError: true,
      // The failure's DTO class is read from the error's target; values never reach a body.
      validationError: { target: true, value: false },
      exceptionFactory: validationFailure,
    }),
  );
  setupOpenApi(app);
}
