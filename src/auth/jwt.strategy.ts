import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest as Request } from 'fastify';
import { Strategy } from 'passport-jwt';
import { UsersService } from '../users/users.service';
import { AuthUser } from '../common/decorators';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { bearerToken, hashToken } from './bearer-token';
import { jwtKey } from './jwt-key';
import { JwtPayload, TokenService } from './token.service';

/**
 * A token is good when its signature (with the one configured algorithm) and expiry check
 * out, its login record still exists for the same user, and that user is active.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly tokens: TokenService,
    private readonly users: UsersService,
  ) {
    super({
      jwtFromRequest: (request: Request) => bearerToken(request),
      secretOrKey: jwtKey(config.jwt.secret),
      algorithms: [config.jwt.algorithm],
      ignoreExpiration: false,
      passReqToCallback: true,
    });
  }

  async validate(request: Request, payload: Partial<JwtPayload>): Promise<AuthUser | false> {
    const token = bearerToken(request);
    if (!token || typeof payload.user_id !== 'number') return false;
    const tokenHash = hashToken(token);
    const owner = await this.tokens.findOwner(tokenHash);
    if (!owner || owner.userId !== payload.user_id || !owner.isActive) return false;
    return {
      id: owner.userId,
      name: owner.name,
      email: owner.email,
      isAdmin: this.users.isAdmin(owner),
      tokenHash,
    };
  }
}
