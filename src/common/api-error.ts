import { HttpException, HttpStatus } from '@nestjs/common';
import type { Response } from 'express';

/** An error the client is meant to read: its message reaches the body as it is. */
export class ApiError extends HttpException {
  constructor(
    status: HttpStatus,
    message: string,
    readonly errors?: unknown,
  ) {
    super(message, status);
  }
}

/**
 * The answer to a method a resource does not support: 405 in the usual fail envelope, with
 * the `Allow` header HTTP asks for.
 */
export function methodNotAllowed(response: Response, allow: string): never {
  response.setHeader('Allow', allow);
  throw new ApiError(HttpStatus.METHOD_NOT_ALLOWED, 'Method not allowed');
}
