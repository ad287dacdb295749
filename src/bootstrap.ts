import { INestApplication, ValidationPipe } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';

export const API_PREFIX = 'api/v1';
/** No endpoint takes more than small forms; uploads have their own streamed limit. */
const BODY_LIMIT = '100kb';

/** What the HTTP entrypoint and the e2e tests both apply to the app, so they test the same thing. */
export function configureApp(app: INestApplication): void {
  const express = app as NestExpressApplication;
  express.set('trust proxy', false);
  express.disable('x-powered-by');
  express.useBodyParser('json', { limit: BODY_LIMIT });
  express.useBodyParser('urlencoded', { limit: BODY_LIMIT, extended: false });
  app.setGlobalPrefix(API_PREFIX);
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: false, transform: true }));
  app.enableShutdownHooks();
}
