import { HttpException, HttpStatus } from '@nestjs/common';

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
