import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { createSecretKey } from 'node:crypto';
import { Strategy } from 'passport-jwt';
import { UsersService } from '../account/users.service';
import { AuthUser } from '../common/decorators';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { bearerToken, hashToken } from './bearer-token';
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
    // jsonwebtoken turns a string secret into a key on every verify, trying it first as a PEM
    // public key and catching the failure: about half a millisecond of CPU per request. Given
    // a KeyObject it skips all that (passport-jwt passes the key through; its types say
    // string | Buffer only).
    const key = createSecretKey(Buffer.from(config.jwt.secret, 'utf8'));
    super({
      jwtFromRequest: (request: Request) => bearerToken(request),
      secretOrKey: key as unknown as Buffer,
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
