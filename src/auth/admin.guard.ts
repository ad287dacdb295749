import { CanActivate, ExecutionContext, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest as Request } from 'fastify';
import { ApiError } from '../common/api-error';
import { AuthUser, IS_ADMIN_ONLY } from '../common/decorators';

/** Runs after JwtAuthGuard: routes marked @AdminOnly() need an admin. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const adminOnly = this.reflector.getAllAndOverride<boolean>(IS_ADMIN_ONLY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!adminOnly) return true;
    const user = context.switchToHttp().getRequest<Request & { user?: AuthUser }>().user;
    if (!user?.isAdmin) throw new ApiError(HttpStatus.FORBIDDEN, 'Admin privileges required');
    return true;
  }
}
