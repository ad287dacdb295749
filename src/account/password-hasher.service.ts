import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from '../metrics/metrics';
import { BcryptPool } from './bcrypt-pool';

/** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently cut. */
export const BCRYPT_MAX_BYTES = 72;

@Injectable()
export class PasswordHasher implements OnApplicationShutdown {
  private readonly pool = new BcryptPool();
  private dummyHash?: Promise<string>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: Metrics,
  ) {
    this.pool.waited = metrics.queueWaited('bcrypt');
    metrics.watchQueue('bcrypt', () => this.pool.load);
  }

  hash(password: string): Promise<string> {
    return this.pool.hash(password, this.config.bcryptCost);
  }

  /**
   * Compares against the stored hash, or against a dummy one when there is none, so an
   * unknown user costs the same time as a known one.
   */
  async verify(password: string, hash: string | null | undefined): Promise<boolean> {
    if (!hash) {
      this.dummyHash ??= this.hash('dummy password for timing');
      await this.pool.compare(password, await this.dummyHash);
      return false;
    }
    return this.pool.compare(password, hash);
  }

  /** After the HTTP server has closed (Nest runs module-destroy hooks before that), so logins in flight finish. */
  onApplicationShutdown(): Promise<void> {
    return this.pool.close();
  }
}

export function fitsBcrypt(password: string): boolean {
  return Buffer.byteLength(password, 'utf8') <= BCRYPT_MAX_BYTES;
}
