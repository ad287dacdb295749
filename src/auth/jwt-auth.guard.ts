import { ExecutionContext, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest as Request } from 'fastify';
import { ApiError } from '../common/api-error';
import { IS_PUBLIC, MISSING_TOKEN_IS_BAD_REQUEST } from '../common/decorators';

/** Global guard: every route needs a valid token unless it says @Public(). */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const request = context.switchToHttp().getRequest<Request>();
    if (
      request.headers.authorization === undefined &&
      this.reflector.getAllAndOverride<boolean>(MISSING_TOKEN_IS_BAD_REQUEST, targets)
    ) {
      throw new ApiError(HttpStatus.BAD_REQUEST, 'Invalid Token');
    }
    return super.canActivate(context);
  }

  /**
   * Bad tokens arrive as a missing user; an error here came from looking the token up (the
   * database), and must not pass for a bad token: the exception filter answers it.
   */
  override handleRequest<TUser>(error: unknown, user: TUser | false): TUser {
    if (error) throw error;
    if (!user) throw new ApiError(HttpStatus.UNAUTHORIZED, 'Unauthorized');
    return user;
  }
}
