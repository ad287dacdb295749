import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';

/**
 * Bytes of an unread body dropped before the connection is cut: a client that sends its whole
 * body before it reads the answer (many do) still gets the answer for a body up to this size.
 * Dropped as they come, never held.
 */
export const DISCARD_LIMIT = 64 * 1024 * 1024;

/** How long a connection closed after an answer stays open for the client to read it. */
export const LINGER_MS = 30_000;

const discarding = new WeakSet<IncomingMessage>();

/** Drops what is left of a request's body as it arrives; past DISCARD_LIMIT the connection is cut. */
export function discardBody(request: IncomingMessage): void {
  if (discarding.has(request)) return;
  discarding.add(request);
  let dropped = 0;
  request.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_LIMIT) request.socket.destroy();
  });
  request.resume();
}

/**
 * An answer sent while its request's body is still arriving (a limit hit mid-upload, a 401 or
 * 429 before an upload is read) closes the connection: keeping it alive would mean reading the
 * whole body first, however large. Closing at once would reset it: the kernel answers bytes
 * that arrive at a closed socket with RST, and a client still sending then loses the answer
 * (curl: "Connection reset by peer"). So the answer says `Connection: close`, our side is shut
 * once it is written, and the rest of the body is dropped until the client closes, for at most
 * DISCARD_LIMIT bytes or LINGER_MS (a lingering close, as nginx and Apache do).
 */
export function closeAfterUnreadBodies(app: NestFastifyApplication): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
      if (!request.raw.complete) {
        reply.header('Connection', 'close');
        lingerOnClose(request.raw);
      }
      done(null, payload);
    });
}

function lingerOnClose(request: IncomingMessage): void {
  discardBody(request);
  const socket = request.socket;
  // Node ends a `Connection: close` answer's socket with destroySoon(), which destroys it as
  // soon as the answer is written. On this socket only, its close waits for the client.
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
