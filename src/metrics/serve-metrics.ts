import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from './metrics';
import { measureRequests, serveMetricsOnApi } from './metrics-endpoint';
import { MetricsListener } from './metrics-listener';

/**
 * What METRICS_PORT and METRICS_TOKEN turn on (docs/operations.md#metrics): the request
 * histogram, GET /metrics on the API's listener (with a token) and on a listener of its own.
 * Without either, nothing: no hook, no route, no listener.
 */
export async function serveMetrics(app: NestFastifyApplication): Promise<void> {
  const settings = app.get<AppConfig>(APP_CONFIG).metrics;
  if (settings === null) return;
  const metrics = app.get(Metrics);
  measureRequests(app, metrics);
  serveMetricsOnApi(app, metrics, settings);
  await app.get(MetricsListener).listen();
}
