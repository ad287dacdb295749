import { HttpStatus } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { ApiError } from './api-error';

const FAILURE = 'svc:validationFailure';

interface Failure {
  status: HttpStatus;
  message: string;
  /** Whether the answer names each failing argument in `errors` (`{argument: why}`). */
  errors: boolean;
}

/**
 * How a request DTO fails, so that a route keeps its own message and status. On the class:
 * what any failing argument answers. On a property: what that argument answers when it is
 * the first to fail (e.g. `Invalid target URL` before `Incorrect query parameters`).
 */
export function FailWith(
  status: HttpStatus,
  message: string,
  options: { errors?: boolean } = {},
): ClassDecorator & PropertyDecorator {
  const failure: Failure = { status, message, errors: options.errors ?? true };
  return (target: object, property?: string | symbol) => {
    if (property === undefined) Reflect.defineMetadata(FAILURE, failure, target);
    else Reflect.defineMetadata(FAILURE, failure, target, property);
  };
}

/** A DTO without FailWith still fails closed, with a plain 400. */
const DEFAULT_FAILURE: Failure = {
  status: HttpStatus.BAD_REQUEST,
  message: 'Invalid request arguments',
  errors: true,
};

/**
 * The ValidationPipe's exceptionFactory: the first failing argument decides, in the order
 * the DTO declares them; its own failure if it has one, else the class's, with every failing
 * argument that has none of its own in `errors`.
 */
export function validationFailure(validationErrors: ValidationError[]): ApiError {
  const dto = validationErrors[0]?.target?.constructor;
  const ownFailure = (error: ValidationError): Failure | undefined =>
    dto
      ? (Reflect.getMetadata(FAILURE, dto.prototype as object, error.property) as Failure | undefined)
      : undefined;
  const first = validationErrors[0];
  const own = first && ownFailure(first);
  if (own) return new ApiError(own.status, own.message);
  const failure = (dto && (Reflect.getMetadata(FAILURE, dto) as Failure | undefined)) ?? DEFAULT_FAILURE;
  if (!failure.errors) return new ApiError(failure.status, failure.message);
  const errors = Object.fromEntries(
    validationErrors
      .filter((error) => !ownFailure(error))
      .map((error) => [error.property, Object.values(error.constraints ?? {})[0] ?? 'is invalid']),
  );
  return new ApiError(failure.status, failure.message, errors);
}
