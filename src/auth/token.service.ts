import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { randomUUID, type KeyObject } from 'node:crypto';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { hashToken } from './bearer-token';
import type { User } from '../users/user.entity';
import { LoginOwner, UsersRepository } from '../users/users.repository';
import type { LoginSeen } from '../account-logins/login-seen';
import { jwtKey } from './jwt-key';

export type { TokenOwner } from '../users/users.repository';

export interface JwtPayload {
  user_id: number;
  username: string;
  iat: number;
  exp: number;
  jti: string;
}

@Injectable()
export class TokenService {
  private readonly signingKey: KeyObject;

  constructor(
    private readonly jwt: JwtService,
    private readonly users: UsersRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.signingKey = jwtKey(config.jwt.secret);
  }

  /**
   * Signs a JWT for the user as the caller read it and records its hash under the user's
   * credential generation, with what the login saw of its client; expired records of the
   * user are swept.
   */
  async issue(user: User, seen: LoginSeen = { clientAddress: null, userAgent: null }): Promise<string> {
    const now = this.clock.now();
    const iat = Math.floor(now.getTime() / 1000);
    const payload: JwtPayload = {
      user_id: user.id,
      username: user.name,
      iat,
      exp: iat + this.config.jwt.expiresInSeconds,
      jti: randomUUID(),
    };
    const token = await this.jwt.signAsync(payload, {
      // @nestjs/jwt hands the KeyObject to jsonwebtoken as it is; its type says string | Buffer.
      secret: this.signingKey as unknown as Buffer,
      algorithm: this.config.jwt.algorithm,
    });
    await this.users.recordToken({
      userId: user.id,
      tokenHash: hashToken(token),
      expiresAt: new Date(payload.exp * 1000),
      createdAt: now,
      // The generation of the row whose password was checked, not the current one: a change
      // committed since then has raised it, and the guard refuses this token.
      credentialGeneration: user.credentialGeneration,
      // Used now: the guard writes the time again only once it is a minute old.
      lastUsedAt: now,
      ...seen,
    });
    return token;
  }

  /** The guard's query, for the tests that read its plan. */
  ownerQuery(tokenHash: string) {
    return this.users.ownerQuery(tokenHash);
  }

  findOwner(tokenHash: string): Promise<LoginOwner | null> {
    return this.users.findOwner(tokenHash);
  }

  async revoke(tokenHash: string): Promise<void> {
    await this.users.revokeToken(tokenHash);
  }
}
