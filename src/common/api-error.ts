import { HttpException, HttpStatus } from '@nestjs/common';

/** An error the client is meant to read: its message reaches the body as it is. */
export class ApiError extends HttpException {
  constructor(
    status: HttpStatus,
    message: string,
    readonly errors?: unknown,
    /** Response headers that belong to the answer, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
    /** A `data` member of the fail body, for clients that read findings there (upload refusals). */
    readonly data?: unknown,
  ) {
    super(message, status);
  }
}

/** HTTP 429 in the fail envelope, saying when to come back. */
export function tooManyRequests(retryAfterMs: number): ApiError {
  return new ApiError(HttpStatus.TOO_MANY_REQUESTS, 'Too many requests', undefined, {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
  });
}

/**
 * The answer to a method a resource does not support: 405 in the usual fail envelope, with
 * the `Allow` header HTTP asks for.
 */
export const METHOD_NOT_ALLOWED = 'Method not allowed';

export function methodNotAllowed(allow: string): ApiError {
  return new ApiError(HttpStatus.METHOD_NOT_ALLOWED, METHOD_NOT_ALLOWED, undefined, { Allow: allow });
}
