import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { LessThan, Repository } from 'typeorm';
import { User } from '../account/user.entity';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { hashToken } from './bearer-token';
import { jwtKey } from './jwt-key';
import { UserLoginToken } from './user-login-token.entity';

export interface JwtPayload {
  user_id: number;
  username: string;
  iat: number;
  exp: number;
  jti: string;
}

/** What the guard needs of a token's record and its user, read in one indexed query. */
export interface TokenOwner {
  userId: number;
  name: string;
  email: string;
  /** Confirmed and not deactivated: the only owner whose tokens are honoured. */
  isActive: boolean;
  isAdmin: boolean;
}

@Injectable()
export class TokenService {
  private ownerSql?: string;
  private readonly signingKey: Buffer;

  constructor(
    private readonly jwt: JwtService,
    @InjectRepository(UserLoginToken) private readonly tokens: Repository<UserLoginToken>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.signingKey = jwtKey(config.jwt.secret);
  }

  /** Signs a JWT for the user and records its hash; expired records of the user are swept. */
  async issue(user: User): Promise<string> {
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
      secret: this.signingKey,
      algorithm: this.config.jwt.algorithm,
    });
    await this.tokens.delete({ userId: user.id, expiresAt: LessThan(now) });
    await this.tokens.insert({
      userId: user.id,
      tokenHash: hashToken(token),
      expiresAt: new Date(payload.exp * 1000),
      createdAt: now,
    });
    return token;
  }

  /** One indexed lookup: the unique token_hash, then the user by primary key. */
  ownerQuery(tokenHash: string) {
    return this.tokens
      .createQueryBuilder('token')
      .innerJoin('token.user', 'user')
      .select('token.user_id', 'userId')
      .addSelect('user.name', 'name')
      .addSelect('user.email', 'email')
      .addSelect('user.is_active', 'isActive')
      .addSelect('user.deactivated_at', 'deactivatedAt')
      .addSelect('user.is_admin', 'isAdmin')
      .where('token.token_hash = :tokenHash', { tokenHash });
  }

  /** Every authenticated request runs this: its SQL is built once, not per request. */
  async findOwner(tokenHash: string): Promise<TokenOwner | null> {
    this.ownerSql ??= this.ownerQuery('').getQueryAndParameters()[0];
    const [row] = (await this.tokens.query(this.ownerSql, [tokenHash])) as Array<{
      userId: number;
      name: string;
      email: string;
      isActive: unknown;
      deactivatedAt: unknown;
      isAdmin: unknown;
    }>;
    if (!row) return null;
    return {
      userId: Number(row.userId),
      name: row.name,
      email: row.email,
      isActive: Boolean(Number(row.isActive)) && row.deactivatedAt === null,
      isAdmin: Boolean(Number(row.isAdmin)),
    };
  }

  async revoke(tokenHash: string): Promise<void> {
    await this.tokens.delete({ tokenHash });
  }
}
