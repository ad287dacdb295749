import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AccountRepository } from './account.repository';

/** How long an expired link still answers `Link Expired` (with its address) before it goes. */
export const EXPIRED_LINK_KEPT_MS = 24 * 3_600_000;
const SWEEP_INTERVAL_MS = 3_600_000;

/**
 * Link records are written for every address asked about, also addresses without an account,
 * and a newer one does not delete the older ones: this deletes every record a day after it
 * expired, once an hour in each process (a repeated delete is harmless).
 */
@Injectable()
export class ActivationLinkSweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ActivationLinks');
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    private readonly accounts: AccountRepository,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One sweep; returns how many records went. A failure (database down) is logged and thrown. */
  sweep(): Promise<number> {
    this.running ??= this.accounts
      .deleteExpired(new Date(this.clock.now().getTime() - EXPIRED_LINK_KEPT_MS))
      .catch((error: unknown) => {
        this.logger.warn(`Sweeping expired activation links failed: ${(error as Error).message}`);
        throw error;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }
}
