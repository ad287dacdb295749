import { Inject, Injectable } from '@nestjs/common';
import bcrypt from 'bcryptjs';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

/** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently cut. */
export const BCRYPT_MAX_BYTES = 72;

@Injectable()
export class PasswordHasher {
  private dummyHash?: Promise<string>;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  hash(password: string): Promise<string> {
    return bcrypt.hash(password, this.config.bcryptCost);
  }

  /**
   * Compares against the stored hash, or against a dummy one when there is none, so an
   * unknown user costs the same time as a known one.
   */
  async verify(password: string, hash: string | null | undefined): Promise<boolean> {
    if (!hash) {
      this.dummyHash ??= bcrypt.hash('dummy password for timing', this.config.bcryptCost);
      await bcrypt.compare(password, await this.dummyHash);
      return false;
    }
    return bcrypt.compare(password, hash);
  }
}

export function fitsBcrypt(password: string): boolean {
  return Buffer.byteLength(password, 'utf8') <= BCRYPT_MAX_BYTES;
}
