import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import { Clock } from '../../common/clock';
import type { AuthUser } from '../../common/decorators';
import { retryOnDeadlock } from '../../database/deadlock';
import { Transactions } from '../../database/transactions';
import { UsersRepository } from '../../users/users.repository';
import { PluginCatalogueService } from './plugin-catalogue.service';
import { pluginNotFound } from '../shared/plugin-lookup';
import { PluginVersionsRepository } from '../shared/plugin-versions.repository';
import { PluginsRepository } from '../shared/plugins.repository';
import type { UserPlugin } from '../shared/user-plugin.entity';

export const STARS_INVALID = 'Stars must be an integer from 1 to 5';
export const OWN_RATING = 'You cannot rate your own plugin';
export const NOT_RATABLE = 'Only approved plugins can be rated';

/** Ratings: 1 to 5 stars, one per user and plugin (a new one replaces it), never one's own (see mailbox.ts). */
@Injectable()
export class PluginRatingsService {
  constructor(
    private readonly plugins: PluginsRepository,
    private readonly versions: PluginVersionsRepository,
    private readonly catalogue: PluginCatalogueService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly users: UsersRepository,
  ) {}

  /** `raw`: the stars as text, a JSON number included; anything but 1 to 5 is a 400. */
  async rate(caller: AuthUser, id: number | null, raw: string | undefined): Promise<UserPlugin> {
    const plugin = await this.catalogue.findVisible(caller, id);
    if (raw === undefined || !/^\s*[1-5]\s*$/.test(raw))
      throw new ApiError(HttpStatus.BAD_REQUEST, STARS_INVALID);
    const stars = Number(raw);
    // The sum and count are written under the plugin's row lock, so ratings sent at once add up.
    await retryOnDeadlock(() =>
      this.transactions.run(async (manager) => {
        const current = await this.plugins.lockAndRead(manager, plugin.id);
        if (!current) throw pluginNotFound();
        // People, not accounts: an address that reaches the uploader's mailbox is the uploader.
        if (await this.users.sharesMailbox(manager, caller.id, [current.userId])) {
          throw new ApiError(HttpStatus.FORBIDDEN, OWN_RATING);
        }
        if (current.status !== 'approved') throw new ApiError(HttpStatus.CONFLICT, NOT_RATABLE);
        const { total, count } = await this.versions.rate(
          manager,
          current.id,
          caller.id,
          stars,
          this.clock.now(),
        );
        await this.plugins.update(manager, current.id, { ratingTotal: total, ratingsCount: count });
      }),
    );
    const rated = await this.plugins.findById(plugin.id);
    if (!rated) throw pluginNotFound();
    return rated;
  }
}
