import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from './metrics';
import { METRICS_PATH, METRICS_UNAUTHORIZED, presentsToken } from './metrics-endpoint';

/**
 * METRICS_PORT: GET /metrics on a listener of its own (loopback unless METRICS_HOST says
 * otherwise), so the scraper reaches it and the API's clients do not. Plain node:http: one
 * path, no API envelope beyond the 401, none of the API's hooks. Started by configureApp (never
 * by svc-admin, which shares the settings), closed after the API's listener.
 */
@Injectable()
export class MetricsListener implements OnApplicationShutdown {
  private server: Server | null = null;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Where it listens, once it does; null without METRICS_PORT. */
  get address(): AddressInfo | null {
    return (this.server?.address() as AddressInfo | null | undefined) ?? null;
  }

  async listen(): Promise<void> {
    const settings = this.config.metrics;
    if (settings?.port == null || this.server !== null) return;
    // The API's own bounds on a slow client (docs/security.md#connections).
    const { httpHeadersTimeoutMs, httpRequestTimeoutMs, httpKeepAliveTimeoutMs } = this.config;
    const server = createServer(
      {
        headersTimeout: httpHeadersTimeoutMs,
        requestTimeout: httpRequestTimeoutMs,
        keepAliveTimeout: httpKeepAliveTimeoutMs,
      },
      (request, response) => void this.answer(request, response, settings.token),
    );
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(settings.port!, settings.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  private async answer(request: IncomingMessage, response: ServerResponse, token: string | null) {
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) =>
      response.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers }).end(body);
    const path = (request.url ?? '')
      .split('?')[0]
      .replace(/(.)\/$/, '$1')
      .toLowerCase();
    if (path !== METRICS_PATH) return send(404, 'text/plain; charset=utf-8', 'Not found\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return send(405, 'text/plain; charset=utf-8', 'Method not allowed\n', { Allow: 'GET, HEAD' });
    }
    if (token !== null && !presentsToken(request.headers.authorization, token)) {
      return send(
        401,
        'application/json; charset=utf-8',
        JSON.stringify({ status: 'fail', message: METRICS_UNAUTHORIZED }),
        {
          'WWW-Authenticate': 'Bearer',
        },
      );
    }
    try {
      const { contentType, text } = await this.metrics.scrape();
      send(200, contentType, request.method === 'HEAD' ? '' : text);
    } catch {
      send(500, 'text/plain; charset=utf-8', 'Metrics could not be collected\n');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
