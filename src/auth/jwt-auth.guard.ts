import { CanActivate, ExecutionContext, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { verify, type VerifyOptions } from 'jsonwebtoken';
import type { KeyObject } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { ANONYMOUS_READS, AuthUser, IS_PUBLIC, MISSING_TOKEN_IS_BAD_REQUEST } from '../common/decorators';
import { RouteMetadata } from '../common/route-metadata';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { UsersService } from '../users/users.service';
import { bearerToken, hashToken, NO_SCHEME } from './bearer-token';
import { jwtKey } from './jwt-key';
import { JwtPayload, TokenService } from './token.service';

const unauthorized = () => new ApiError(HttpStatus.UNAUTHORIZED, 'Unauthorized');

/**
 * Global guard: every route needs a valid token unless it says @Public(). A token is good when
 * its signature (with the one configured algorithm) and expiry check out, its login record
 * still exists for the same user, and that user is active.
 *
 * Our own guard rather than passport-jwt: the check is one verify and one query, and passport's
 * strategy and callback layers cost more per request than the check itself (see the README).
 */
@Injectable()
export class JwtAuthGuard implements CanActivate {
  private readonly key: KeyObject;
  private readonly verifyOptions: VerifyOptions;

  private readonly isPublic: RouteMetadata<boolean>;
  private readonly missingTokenIsBadRequest: RouteMetadata<boolean>;
  private readonly anonymousReads: RouteMetadata<boolean> | null;

  constructor(
    reflector: Reflector,
    private readonly tokens: TokenService,
    private readonly users: UsersService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    // jsonwebtoken itself: JwtService.verify would merge its options anew on every request.
    this.key = jwtKey(config.jwt.secret);
    this.verifyOptions = { algorithms: [config.jwt.algorithm] };
    this.isPublic = new RouteMetadata(reflector, IS_PUBLIC);
    this.missingTokenIsBadRequest = new RouteMetadata(reflector, MISSING_TOKEN_IS_BAD_REQUEST);
    this.anonymousReads = config.pluginAnonymousReads ? new RouteMetadata(reflector, ANONYMOUS_READS) : null;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic.of(context)) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (request.headers.authorization === undefined && this.anonymousReads?.of(context)) return true;
    if (request.headers.authorization === undefined && this.missingTokenIsBadRequest.of(context)) {
      throw new ApiError(HttpStatus.BAD_REQUEST, 'Invalid Token');
    }
    request.user = await this.authenticate(request);
    return true;
  }

  /**
   * A bad token is 401; an error from looking the token up (the database) is not a bad token
   * and goes to the exception filter as it is (503 while the database is away).
   */
  private async authenticate(request: FastifyRequest): Promise<AuthUser> {
    const token = bearerToken(request);
    if (token === 'no-scheme') throw new ApiError(HttpStatus.UNAUTHORIZED, NO_SCHEME);
    if (!token) throw unauthorized();
    let payload: Partial<JwtPayload>;
    try {
      payload = verify(token, this.key, this.verifyOptions) as Partial<JwtPayload>;
    } catch {
      throw unauthorized();
    }
    if (typeof payload !== 'object' || payload === null || typeof payload.user_id !== 'number') {
      throw unauthorized();
    }
    const tokenHash = hashToken(token);
    const owner = await this.tokens.findOwner(tokenHash);
    if (!owner || owner.userId !== payload.user_id || !owner.isActive) throw unauthorized();
    return {
      id: owner.userId,
      name: owner.name,
      email: owner.email,
      isAdmin: this.users.isAdmin(owner),
      tokenHash,
    };
  }
}
