import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import type { Request } from 'express';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { readParam } from '../common/request-params';

const MINUTE_MS = 60_000;
/** Per client address, per route. */
export const ADDRESS_LIMIT = { limit: 30, ttl: MINUTE_MS };
/** Per account identifier (email or username), per route: slows guessing one account from many addresses. */
export const IDENTIFIER_LIMIT = { limit: 10, ttl: 15 * MINUTE_MS };

/** The parameters that name an account on the rate-limited account endpoints. */
const IDENTIFIER_PARAMS = ['emailOrUsername', 'email', 'username'];

export function accountIdentifier(request: Request): string | undefined {
  for (const name of IDENTIFIER_PARAMS) {
    const value = readParam(request, name);
    if (value) return value.trim().toLowerCase();
  }
  return undefined;
}

@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        // A throttler's own skipIf replaces the common one, so each states the switch.
        skipIf: () => !config.rateLimit,
        throttlers: [
          {
            name: 'address',
            ...ADDRESS_LIMIT,
            getTracker: (request) => (request as Request).ip ?? 'unknown',
          },
          {
            name: 'identifier',
            ...IDENTIFIER_LIMIT,
            skipIf: (context) =>
              !config.rateLimit ||
              accountIdentifier(context.switchToHttp().getRequest<Request>()) === undefined,
            getTracker: (request) => accountIdentifier(request as Request) ?? '',
          },
        ],
      }),
    }),
  ],
})
export class RateLimitModule {}
