import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { FastifyRequest as Request } from 'fastify';
import { ApiPublic } from '../openapi/api-docs';

export const IS_PUBLIC = 'svc:isPublic';
export const IS_ADMIN_ONLY = 'svc:isAdminOnly';
export const MISSING_TOKEN_IS_BAD_REQUEST = 'svc:missingTokenIsBadRequest';

/** The route needs no token. Every other route does (deny by default). */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiPublic());

/** The route needs a token of an admin. */
export const AdminOnly = () => SetMetadata(IS_ADMIN_ONLY, true);

/** The spec answers a missing Authorization header with 400 `Invalid Token` on logout. */
export const MissingTokenIsBadRequest = () => SetMetadata(MISSING_TOKEN_IS_BAD_REQUEST, true);

/** The authenticated caller, as the JWT guard put it on the request. */
export interface AuthUser {
  id: number;
  name: string;
  email: string;
  isAdmin: boolean;
  /** SHA-256 of the presented token, the key of its login record. */
  tokenHash: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the JWT guard on authenticated routes. */
    user?: AuthUser;
  }
}

export const CurrentUser = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<Request & { user?: AuthUser }>();
  return request.user;
});
