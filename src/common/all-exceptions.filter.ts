import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './api-error';
import { isDatabaseUnavailable } from './database-unavailable';
import { ACCOUNT_ANSWERS } from './decorators';

interface FailBody {
  status: 'fail';
  message: string;
  errors?: unknown;
  data?: unknown;
  error_id?: string;
}

/**
 * The one place that turns an exception into a response: `{status: 'fail', message}` with
 * the HTTP status. Nothing from inside (stack, SQL, paths) reaches the client; an
 * unexpected error is logged under an id that the client gets instead.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    if (clientWentAway(exception, request)) return;
    const [status, body] = this.describe(exception, request.id);
    // An account endpoint's refusal (400, 401, 429, 503, ...) repeats itself under `data`, as its
    // answers do (see envelopes.ts).
    const config = request.routeOptions?.config as unknown as Record<string, unknown> | undefined;
    if (config?.[ACCOUNT_ANSWERS] === true && body.data === undefined) {
      body.data = { status: body.status, message: body.message };
    }
    if (reply.sent) {
      reply.raw.end();
      return;
    }
    if (exception instanceof ApiError) reply.headers(exception.headers);
    void reply.status(status).send(body);
  }

  private describe(exception: unknown, requestId: string): [number, FailBody] {
    if (exception instanceof ApiError) {
      const body: FailBody = { status: 'fail', message: exception.message };
      if (exception.errors !== undefined) body.errors = exception.errors;
      if (exception.data !== undefined) body.data = exception.data;
      return [exception.getStatus(), body];
    }
    if (exception instanceof HttpException) {
      return (
        bodyParserError(exception.cause) ?? [
          exception.getStatus(),
          { status: 'fail', message: messageOf(exception) },
        ]
      );
    }
    const clientError = bodyParserError(exception);
    if (clientError) return clientError;
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(
        `Database unavailable: ${exception instanceof Error ? exception.message : String(exception)}`,
      );
      return [HttpStatus.SERVICE_UNAVAILABLE, { status: 'fail', message: 'Service unavailable' }];
    }
    const errorId = randomUUID();
    this.logger.error(
      `error_id=${errorId} request_id=${requestId} ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`,
    );
    return [
      HttpStatus.INTERNAL_SERVER_ERROR,
      { status: 'fail', message: 'Internal server error', error_id: errorId },
    ];
  }
}

/**
 * The request's stream failed because its connection closed before the body arrived (the
 * client hung up, or a time limit cut it off: src/http/request-timeouts.ts). No one is left to
 * answer, and nothing failed on our side: neither a 503 nor an error is logged.
 */
function clientWentAway(exception: unknown, request: FastifyRequest): boolean {
  const code = (exception as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' && request.raw.destroyed && !request.raw.complete;
}

/** Nest's own exceptions (404 for an unknown route, 405, ...) keep their short text. */
function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message) && typeof message[0] === 'string') return message[0];
  return exception.message;
}

/** Malformed or oversized bodies fail in Fastify's body parsers, before any handler. */
function bodyParserError(exception: unknown): [number, FailBody] | null {
  const error = exception as { code?: unknown; statusCode?: unknown };
  if (typeof error !== 'object' || error === null) return null;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return [HttpStatus.PAYLOAD_TOO_LARGE, { status: 'fail', message: 'Request body too large' }];
  }
  if (exception instanceof URIError) {
    return [HttpStatus.BAD_REQUEST, { status: 'fail', message: 'Malformed request path' }];
  }
  // Broken JSON (a SyntaxError), a bad Content-Length, a body cut short, `__proto__` keys.
  const fromParser = typeof error.code === 'string' && error.code.startsWith('FST_');
  if ((fromParser || exception instanceof SyntaxError) && error.statusCode === 400) {
    return [HttpStatus.BAD_REQUEST, { status: 'fail', message: 'Malformed request body' }];
  }
  return null;
}
