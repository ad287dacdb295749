import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MemoryRateLimitStore, RATE_LIMIT_STORE } from './rate-limit-store';
import type { RateLimitStore } from './rate-limit-store';
import { RateLimiter } from './rate-limiter';
import { RedisRateLimitStore } from './redis-rate-limit-store';

/**
 * The counters behind every limit: in Redis when REDIS_URL is set, so replicas share them;
 * in the process otherwise. Global, as account endpoints and uploads both count through it.
 */
@Global()
@Module({
  providers: [
    RateLimiter,
    {
      provide: RATE_LIMIT_STORE,
      inject: [APP_CONFIG, Clock],
      useFactory: (config: AppConfig, clock: Clock): RateLimitStore =>
        config.redisUrl
          ? new RedisRateLimitStore(config.redisUrl)
          : new MemoryRateLimitStore(() => clock.now().getTime()),
    },
  ],
  exports: [RATE_LIMIT_STORE, RateLimiter],
})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(@Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.store instanceof RedisRateLimitStore) await this.store.close();
  }
}
