import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { from, type Observable, switchMap } from 'rxjs';
import { readMultipart, type MultipartRules } from './multipart';

const MULTIPART_RULES = 'svc:multipartRules';

/** Text fields only, as small as account parameters are; a file part is a malformed body. */
const FORM_FIELDS: MultipartRules = { fields: 20, fieldSize: 4096, parts: 20 };

/**
 * A route whose multipart body needs other limits, or (`'own'`) that reads it itself after
 * its own checks, as the upload does.
 */
export const MultipartFields = (rules: MultipartRules | 'own') => SetMetadata(MULTIPART_RULES, rules);

export function isMultipart(request: FastifyRequest): boolean {
  return /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');
}

/**
 * Multipart fields join JSON and urlencoded bodies as request arguments: parsed into
 * `request.body` after the guards (so strangers cost no parsing) and before every route's
 * own interceptors (the account limits read the identifier from the body).
 */
@Injectable()
export class MultipartFieldsInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // Synchronous unless there is a form to read: this runs on every request.
    if (!isMultipart(request)) return next.handle();
    const rules =
      this.reflector.getAllAndOverride<MultipartRules | 'own' | undefined>(MULTIPART_RULES, [
        context.getHandler(),
        context.getClass(),
      ]) ?? FORM_FIELDS;
    if (rules === 'own') return next.handle();
    return from(readMultipart(request.raw, rules)).pipe(
      switchMap(({ fields }) => {
        request.body = fields;
        return next.handle();
      }),
    );
  }
}
