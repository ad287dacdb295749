import type { INestApplication, LoggerService } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * On SIGTERM or SIGINT: stop accepting connections, let the requests in flight finish (each
 * answer closes its keep-alive connection so clients move on), then close the modules and the
 * database, and exit 0. Past `graceMs` the process gives up and exits 1.
 * Must be called before the app starts listening: its middleware has to run first.
 */
export function enableGracefulShutdown(app: INestApplication, logger: LoggerService, graceMs: number): void {
  const inFlight = new Set<ServerResponse>();
  let shuttingDown = false;

  app.use((_request: IncomingMessage, response: ServerResponse, next: () => void) => {
    if (shuttingDown) {
      response.setHeader('Connection', 'close');
    } else {
      inFlight.add(response);
      response.once('close', () => inFlight.delete(response));
    }
    next();
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      shuttingDown = true;
      logger.log(`${signal} received, shutting down`, 'Main');
      setTimeout(() => process.exit(1), graceMs).unref();
      for (const response of inFlight) {
        if (!response.headersSent) response.setHeader('Connection', 'close');
      }
      const server = app.getHttpServer() as Server;
      server.close(() => {
        app.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      });
      server.closeIdleConnections();
    });
  }
}
