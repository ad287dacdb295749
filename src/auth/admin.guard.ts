import { CanActivate, ExecutionContext, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest as Request } from 'fastify';
import { ApiError } from '../common/api-error';
import { ADMIN_NEEDS_SECOND_FACTOR } from '../common/access-scopes';
import { AuthUser, IS_ADMIN_ONLY } from '../common/decorators';
import { RouteMetadata, type RouteRef } from '../common/route-metadata';

/**
 * Runs after JwtAuthGuard: routes marked @AdminOnly() need an admin; an admin who must enrol
 * a second factor first (ADMIN_SECOND_FACTOR=required) is told so.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly adminOnly: RouteMetadata<boolean>;

  constructor(reflector: Reflector) {
    this.adminOnly = new RouteMetadata(reflector, IS_ADMIN_ONLY);
  }

  canActivate(context: ExecutionContext): boolean {
    return this.admit(context, context.switchToHttp().getRequest<Request>());
  }

  /** The guard's judgement, for Nest's pipeline and for the answers decided before it. */
  admit(route: RouteRef, request: Request & { user?: AuthUser }): boolean {
    if (!this.adminOnly.of(route)) return true;
    const user = request.user;
    if (user?.awaitsSecondFactor) throw new ApiError(HttpStatus.FORBIDDEN, ADMIN_NEEDS_SECOND_FACTOR);
    if (!user?.isAdmin) throw new ApiError(HttpStatus.FORBIDDEN, 'Admin privileges required');
    return true;
  }
}
