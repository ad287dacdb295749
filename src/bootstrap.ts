import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppConfig } from './config/app-config';
import { APP_CONFIG } from './config/config.module';
import { ArgumentsPipe } from './common/arguments-pipe';
import { echoRequestId, forbidCaching, registerBodyParsers } from './http/http-adapter';
import { capConnectionsPerAddress } from './http/connections-per-address';
import { applySecurityHeaders } from './http/security-headers';
import { closeAfterUnreadBodies } from './http/unread-body';
import { forgetVersionsAfterWrites } from './community-plugins/caching/conditional-answers';
import { revalidateEarly } from './community-plugins/caching/early-revalidation';
import { AppLogger } from './logging/app-logger';
import { logRequests } from './logging/request-log';
import { serveMetrics } from './metrics/serve-metrics';
import { setupOpenApi } from './openapi/openapi';
import { servePages } from './pages/pages';

export const API_PREFIX = 'api/v1';

/** What the HTTP entrypoint and the e2e tests both apply to the app, so they test the same thing. */
export async function configureApp(app: NestFastifyApplication): Promise<void> {
  const config = app.get<AppConfig>(APP_CONFIG);
  capConnectionsPerAddress(app.getHttpServer(), config);
  logRequests(app, app.get(AppLogger).pino);
  applySecurityHeaders(app);
  echoRequestId(app);
  forbidCaching(app);
  closeAfterUnreadBodies(app);
  forgetVersionsAfterWrites(app);
  revalidateEarly(app, API_PREFIX);
  if (config.corsOrigins.length > 0) {
    app.enableCors({ origin: config.corsOrigins, exposedHeaders: ['X-Request-Id'] });
  }
  registerBodyParsers(app);
  app.setGlobalPrefix(API_PREFIX);
  app.useGlobalPipes(new ArgumentsPipe());
  setupOpenApi(app);
  // The pages the activation mail links (outside /api/v1, with the same headers).
  servePages(app);
  await serveMetrics(app);
}
