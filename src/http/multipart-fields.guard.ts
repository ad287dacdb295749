import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { RouteMetadata } from '../common/route-metadata';
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
 * `request.body` after authentication (so strangers cost no parsing) and before every route's
 * own interceptors (the account limits read the identifier from the body).
 *
 * A guard that always lets the request through, registered after the authentication guards
 * (see HttpEdgeModule): guards are the step of Nest's request lifecycle between those two, and,
 * unlike an interceptor, a guard costs no Observable pipeline on the requests without a form,
 * which are nearly all of them.
 */
@Injectable()
export class MultipartFieldsGuard implements CanActivate {
  private readonly rules: RouteMetadata<MultipartRules | 'own'>;

  constructor(reflector: Reflector) {
    this.rules = new RouteMetadata(reflector, MULTIPART_RULES);
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!isMultipart(request)) return true;
    const rules = this.rules.of(context) ?? FORM_FIELDS;
    if (rules === 'own') return true;
    return readMultipart(request.raw, rules).then(({ fields }) => {
      request.body = fields;
      return true;
    });
  }
}
