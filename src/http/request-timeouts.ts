import type { FastifyHttpOptions } from 'fastify';
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AppConfig } from '../config/app-config';

/**
 * How often Node looks for connections past their headers or whole-request limit (its own
 * default is 30 s, which would let a 15 s limit run to 45 s): each is enforced within this
 * much of passing. The look is one walk over the connections receiving a request, in C++.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1000;

/** The 408's message: which of the two limits passed is not known where it is written. */
export const requestTimedOut = (settings: TimeoutSettings) =>
  `Request timed out: the headers must arrive within ${settings.httpHeadersTimeoutMs / 1000} s ` +
  `and the whole request within ${settings.httpRequestTimeoutMs / 1000} s`;
export const HEADERS_TOO_LARGE = 'Request headers too large';
export const BAD_REQUEST = 'Bad request';

export type TimeoutSettings = Pick<
  AppConfig,
  'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs'
>;

/**
 * Fastify's own defaults hold a connection for as long as a client likes: no limit on a
 * request's body (requestTimeout 0), and 72 s for an idle kept-alive connection. These are
 * Node's server options, set where Fastify creates the server (it sets the last two again).
 */
export function timeoutOptions(
  settings: TimeoutSettings,
): Pick<FastifyHttpOptions<Server>, 'http' | 'requestTimeout' | 'keepAliveTimeout' | 'clientErrorHandler'> {
  return {
    http: {
      headersTimeout: settings.httpHeadersTimeoutMs,
      requestTimeout: settings.httpRequestTimeoutMs,
      keepAliveTimeout: settings.httpKeepAliveTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    requestTimeout: settings.httpRequestTimeoutMs,
    keepAliveTimeout: settings.httpKeepAliveTimeoutMs,
    clientErrorHandler: clientErrorAnswers(requestTimedOut(settings)),
  };
}

type Answer = [status: number, reason: string, message: string];
const OTHERWISE: Answer = [400, 'Bad Request', BAD_REQUEST];

/**
 * What Node could not hand to a route (a request past its time limit, headers it cannot parse)
 * is answered in the API's envelope, then the connection is closed, as Node and Fastify do.
 * Nothing is written where an answer has begun or the connection is already closing.
 */
function clientErrorAnswers(timedOut: string) {
  const answers: Record<string, Answer> = {
    ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', timedOut],
    HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', HEADERS_TOO_LARGE],
  };
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const [status, reason, message] = answers[error.code ?? ''] ?? OTHERWISE;
      const body = JSON.stringify({ status: 'fail', message });
      socket.write(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
