import type { INestApplication, LoggerService } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Socket } from 'node:net';

/**
 * A connection accepted before the signal whose request has not arrived yet (it is on its
 * way) gets this long to send it; Node's own close would reset it at once.
 */
const UNSENT_REQUEST_WAIT_MS = 1_000;

/** The stop signal (SIGTERM or SIGINT, counted together) that exits without waiting. */
const FORCING_SIGNAL = 3;

interface ConnectionState {
  /** Requests received on it so far. */
  received: number;
  /** Requests received and not yet answered. */
  open: number;
}

/**
 * On SIGTERM or SIGINT: first `drainMs` of business as usual except that `onDrain` has taken
 * the replica's readiness down (a balancer checking it stops sending new requests), then stop
 * accepting connections, let every request already received
 * finish (each answer closes its connection, so clients move on), then close the modules
 * (the bcrypt pool, the database) and exit 0. Past `graceMs` the process gives up and exits 1,
 * as it does at a third stop signal.
 * Must be called before the app starts listening: its middleware has to run first.
 */
export function enableGracefulShutdown(
  app: INestApplication,
  logger: LoggerService,
  graceMs: number,
  drain: { ms: number; onDrain: () => void } = { ms: 0, onDrain: () => undefined },
): void {
  const connections = new Map<Socket, ConnectionState>();
  const inFlight = new Set<ServerResponse>();
  let shuttingDown = false;
  const server = app.getHttpServer() as Server;

  server.on('connection', (socket: Socket) => {
    connections.set(socket, { received: 0, open: 0 });
    socket.once('close', () => connections.delete(socket));
  });

  app.use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
    const state = connections.get(request.socket);
    if (state) {
      state.received += 1;
      state.open += 1;
    }
    inFlight.add(response);
    response.once('close', () => {
      inFlight.delete(response);
      if (state) state.open -= 1;
      // A response already under way at the signal kept its keep-alive: end the connection
      // once it is idle, or the server would wait for it until the grace runs out.
      if (shuttingDown && state?.open === 0) request.socket.end();
    });
    if (shuttingDown) response.setHeader('Connection', 'close');
    // A debug line per request as it is received: what the shutdown test counts.
    logger.debug?.(`Request received: ${request.method} ${request.url} (${inFlight.size} in flight)`, 'Main');
    next();
  });

  const closeIdle = (alsoUnused: boolean) => {
    for (const [socket, state] of connections) {
      if (state.open === 0 && (alsoUnused || state.received > 0)) socket.destroy();
    }
  };

  // A terminal's Ctrl-C signals the whole process group, and npm passes on what it gets: one
  // Ctrl-C under `npm start` reaches this process twice. So every signal is handled: the first
  // stops, later ones are logged, and the third exits at once.
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals === 1) {
      drain.onDrain();
      if (drain.ms > 0) {
        logger.log(
          `${signal} received: readiness down, serving ${drain.ms} ms more while the balancer lets go`,
          'Main',
        );
        setTimeout(() => stop(signal), drain.ms);
      } else stop(signal);
      return;
    }
    if (signals < FORCING_SIGNAL) {
      logger.log(
        `${signal} received again: already stopping (${signals} of ${FORCING_SIGNAL}: the last exits at once)`,
        'Main',
      );
      return;
    }
    logger.error(
      `${signal} received again (${signals} of ${FORCING_SIGNAL}): exiting now, without waiting for requests in flight`,
      'Main',
    );
    process.exit(1);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, onSignal);

  function stop(signal: string): void {
    {
      shuttingDown = true;
      setTimeout(() => {
        logger.error(`Requests still in flight after ${graceMs} ms; exiting`, 'Main');
        process.exit(1);
      }, graceMs).unref();
      // net's close, not http's: http's also resets connections whose request has not been
      // read yet. Both stop listening, so new connections are refused from here on.
      NetServer.prototype.close.call(server, () => {
        app.close().then(
          () => {
            logger.log('Shut down', 'Main');
            process.exit(0);
          },
          () => process.exit(1),
        );
      });
      logger.log(
        `${signal} received: new connections are refused; ${inFlight.size} requests in flight get up to ${graceMs} ms`,
        'Main',
      );
      // Keep-alive connections between requests are closed now; answers to the requests in
      // flight carry Connection: close (set below, or by the middleware for later ones).
      for (const response of inFlight) {
        if (!response.headersSent) response.setHeader('Connection', 'close');
      }
      closeIdle(false);
      setTimeout(() => closeIdle(true), UNSENT_REQUEST_WAIT_MS).unref();
    }
  }
}
