import { CanActivate, ExecutionContext, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { verify, type VerifyOptions } from 'jsonwebtoken';
import type { KeyObject } from 'node:crypto';
import { ApiError } from '../common/api-error';
import {
  ANONYMOUS_READS,
  AuthUser,
  IS_ADMIN_ONLY,
  IS_PUBLIC,
  MISSING_TOKEN_IS_BAD_REQUEST,
  TOKEN_SCOPE,
} from '../common/decorators';
import { Clock } from '../common/clock';
import { ACCESS_TOKEN_PREFIX, type AccessScope, lacksScope, TOKEN_REFUSED } from '../common/access-scopes';
import { AccessTokensRepository } from '../users/access-tokens.repository';
import { LoginsRepository } from '../users/logins.repository';
import { RouteMetadata, type RouteRef } from '../common/route-metadata';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { SecondFactorService } from '../second-factor/second-factor.service';
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
  private readonly tokenScope: RouteMetadata<AccessScope | { refused: string }>;
  private readonly adminOnly: RouteMetadata<boolean>;
  private readonly adminSecondFactorRequired: boolean;

  constructor(
    reflector: Reflector,
    private readonly tokens: TokenService,
    private readonly users: UsersService,
    private readonly accessTokens: AccessTokensRepository,
    private readonly logins: LoginsRepository,
    private readonly clock: Clock,
    private readonly secondFactor: SecondFactorService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    // jsonwebtoken itself: JwtService.verify would merge its options anew on every request.
    this.key = jwtKey(config.jwt.secret);
    this.verifyOptions = { algorithms: [config.jwt.algorithm] };
    this.isPublic = new RouteMetadata(reflector, IS_PUBLIC);
    this.missingTokenIsBadRequest = new RouteMetadata(reflector, MISSING_TOKEN_IS_BAD_REQUEST);
    this.anonymousReads = config.pluginAnonymousReads ? new RouteMetadata(reflector, ANONYMOUS_READS) : null;
    this.tokenScope = new RouteMetadata(reflector, TOKEN_SCOPE);
    this.adminOnly = new RouteMetadata(reflector, IS_ADMIN_ONLY);
    this.adminSecondFactorRequired = config.adminSecondFactor === 'required';
  }

  /** Requests admitted before Nest's pipeline (caching/early-revalidation.ts) are not admitted twice. */
  private readonly admittedEarly = new WeakSet<FastifyRequest>();

  canActivate(context: ExecutionContext): Promise<boolean> | boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (this.admittedEarly.has(request)) return true;
    return this.admit(context, request);
  }

  /**
   * The guard's whole judgement of a request for a route, for Nest's pipeline and for the
   * answers decided before it: true with `request.user` set (or none on a public route), or
   * the refusal thrown.
   */
  async admit(route: RouteRef, request: FastifyRequest): Promise<boolean> {
    if (this.isPublic.of(route)) return true;
    if (request.headers.authorization === undefined && this.anonymousReads?.of(route)) return true;
    if (request.headers.authorization === undefined && this.missingTokenIsBadRequest.of(route)) {
      throw new ApiError(HttpStatus.BAD_REQUEST, 'Invalid Token');
    }
    request.user = await this.withAdminRule(await this.authenticate(route, request));
    return true;
  }

  /** As `admit`, and Nest's pass of this guard for the same request then admits it at once. */
  async admitEarly(route: RouteRef, request: FastifyRequest): Promise<boolean> {
    const admitted = await this.admit(route, request);
    if (admitted) this.admittedEarly.add(request);
    return admitted;
  }

  /**
   * ADMIN_SECOND_FACTOR=required: an admin whose second factor is not on holds no admin power
   * anywhere (admin routes, admin views, the pending lists) until it is; one read by primary
   * key, for admins only.
   */
  private async withAdminRule(user: AuthUser): Promise<AuthUser> {
    if (!this.adminSecondFactorRequired || !user.isAdmin) return user;
    if (await this.secondFactor.isEnabled(user.id)) return user;
    return { ...user, isAdmin: false, awaitsSecondFactor: true };
  }

  /**
   * A bad token is 401; an error from looking the token up (the database) is not a bad token
   * and goes to the exception filter as it is (503 while the database is away).
   */
  private async authenticate(route: RouteRef, request: FastifyRequest): Promise<AuthUser> {
    const token = bearerToken(request);
    if (token === 'no-scheme') throw new ApiError(HttpStatus.UNAUTHORIZED, NO_SCHEME);
    if (!token) throw unauthorized();
    if (token.startsWith(ACCESS_TOKEN_PREFIX)) return this.authenticateAccessToken(token, route, request);
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
    // At most one write a minute per login, which the request does not wait for.
    this.logins.noteUse(owner.loginId, owner.lastUsedAt, this.clock.now());
    return {
      id: owner.userId,
      name: owner.name,
      email: owner.email,
      isAdmin: this.users.isAdmin(owner),
      tokenHash,
    };
  }

  /**
   * A personal access token: its record (unexpired, of its user's credential generation), its
   * active user, and a scope that opens the route; the admin guard then asks for the role held
   * now. A use is noted (last_used_at) at most once a minute.
   */
  private async authenticateAccessToken(
    token: string,
    route: RouteRef,
    request: FastifyRequest,
  ): Promise<AuthUser> {
    const tokenHash = hashToken(token);
    const now = this.clock.now();
    const owner = await this.accessTokens.findOwner(tokenHash, now);
    if (!owner || !owner.isActive) throw unauthorized();
    const needed = this.scopeNeeded(route, request.method);
    if (typeof needed === 'object') throw new ApiError(HttpStatus.FORBIDDEN, needed.refused);
    if (!owner.scopes.includes(needed)) throw new ApiError(HttpStatus.FORBIDDEN, lacksScope(needed));
    await this.accessTokens.touch(owner, now);
    return {
      id: owner.userId,
      name: owner.name,
      email: owner.email,
      isAdmin: this.users.isAdmin(owner),
      tokenHash,
    };
  }

  /** The route's own word (NeedsScope, AccessTokensRefused), else admin routes `review`, other GETs `read`. */
  private scopeNeeded(route: RouteRef, method: string): AccessScope | { refused: string } {
    const declared = this.tokenScope.of(route);
    if (declared !== undefined) return declared;
    if (this.adminOnly.of(route)) return 'review';
    return method === 'GET' || method === 'HEAD' ? 'read' : { refused: TOKEN_REFUSED };
  }
}
