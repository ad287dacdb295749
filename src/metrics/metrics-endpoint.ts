import { HttpStatus } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MetricsConfig } from '../config/app-config';
import type { Metrics } from './metrics';

export const METRICS_PATH = '/metrics';
/** The route label of a request no route took (404, 405): never its path, which a client chose. */
export const UNMATCHED_ROUTE = 'unmatched';

type Observe = (seconds: number) => void;

/**
 * One observation per answered request, in an onResponse hook: the route's template
 * (`/api/v1/sessions/:id`), method and status. Each label set's histogram child is looked up
 * once and kept, so a request costs three map reads and a scan of the bounds (request-histogram.ts).
 */
export function measureRequests(app: NestFastifyApplication, metrics: Metrics): void {
  const children = new Map<string, Map<string, Map<number, Observe>>>();
  const childFor = (route: string, method: string, status: number): Observe => {
    let byMethod = children.get(route);
    if (byMethod === undefined) children.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let observe = byStatus.get(status);
    if (observe === undefined) {
      observe = metrics.httpRequests.observer({ route, method, status: String(status) });
      byStatus.set(status, observe);
    }
    return observe;
  };
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
      // Methods are the ones Node's parser knows; the template is undefined where no route matched.
      childFor(
        request.routeOptions.url ?? UNMATCHED_ROUTE,
        request.method,
        reply.statusCode,
      )(reply.elapsedTime / 1000);
      done();
    });
}

/**
 * Whether `authorization` is `Bearer <token>`. Both sides are hashed first, so the comparison
 * takes the same time whatever was sent, however long, and wherever it differs.
 */
export function presentsToken(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
  const digest = (text: string) => createHash('sha256').update(text).digest();
  // The token is never empty (32 characters at least): no header can equal it by accident.
  return timingSafeEqual(digest(match?.[1] ?? ''), digest(token));
}

export const METRICS_UNAUTHORIZED = 'Unauthorized';

/**
 * GET /metrics on the API's own listener, only where METRICS_TOKEN is set; without it the path
 * is unknown there (404, as any other). A plain Fastify route like the pages: no API operation.
 */
export function serveMetricsOnApi(
  app: NestFastifyApplication,
  metrics: Metrics,
  config: MetricsConfig,
): void {
  const token = config.token;
  if (token === null) return;
  app
    .getHttpAdapter()
    .getInstance()
    .get(METRICS_PATH, async (request, reply) => {
      if (!presentsToken(request.headers.authorization, token)) {
        return reply
          .code(HttpStatus.UNAUTHORIZED)
          .header('WWW-Authenticate', 'Bearer')
          .send({ status: 'fail', message: METRICS_UNAUTHORIZED });
      }
      const { contentType, text } = await metrics.scrape();
      return reply.type(contentType).send(text);
    });
}
