import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import type { AuthUser } from '../common/decorators';
import { Clock } from '../common/clock';
import { PluginStatus, REJECTION_REASON_MAX_LENGTH } from './plugin-constants';
import { findPluginOr404, pluginNotFound } from './plugin-lookup';
import { PluginStorage, sha256Hex } from './plugin-storage';
import { PluginsRepository } from './plugins.repository';
import type { UserPlugin } from './user-plugin.entity';
import { CONTROL_IN_TEXT } from './plugin-metadata';
import type { PluginSource, ReviewEvent, ReviewHistory } from './dto/plugin.dto';

export type { PluginSource, ReviewEvent, ReviewHistory };

/** The statuses each review action starts from. */
const APPROVABLE: PluginStatus[] = ['pending', 'rejected'];
const REJECTABLE: PluginStatus[] = ['pending', 'approved'];

/** What admins do: read the source, approve, reject, delete, read the review timeline. */
@Injectable()
export class PluginReviewService {
  private readonly logger = new Logger('PluginReview');

  constructor(
    private readonly plugins: PluginsRepository,
    private readonly storage: PluginStorage,
    private readonly clock: Clock,
  ) {}

  /** The file as it is on disk, refused when it is no longer the file that was uploaded. */
  async source(id: number | null): Promise<PluginSource> {
    const plugin = await findPluginOr404(this.plugins, id);
    const content = await this.storage.read(plugin.filePath);
    if (content === null) {
      if (!(await this.storage.exists(plugin.filePath))) {
        await this.markFileMissing(plugin);
        throw fileMissing(HttpStatus.GONE);
      }
      this.logger.warn(`Plugin ${plugin.id} (${plugin.name}): its file is not a regular file or too large`);
      throw modifiedOnDisk();
    }
    const sha256 = sha256Hex(content);
    if (plugin.sha256 === null) {
      this.logger.warn(
        `Plugin ${plugin.id} (${plugin.name}) has no recorded hash; serving its file unverified`,
      );
    } else if (sha256 !== plugin.sha256) {
      this.logger.warn(
        `Plugin ${plugin.id} (${plugin.name}): file hash ${sha256} no longer matches the recorded ${plugin.sha256}`,
      );
      throw modifiedOnDisk();
    }
    return { id: plugin.id, name: plugin.name, sha256, source_code: content.toString('utf8') };
  }

  /** A plugin whose file is missing is never approved: the catalogue would list a plugin nobody can run. */
  approve(reviewer: AuthUser, id: number | null): Promise<UserPlugin> {
    return this.transition(
      id,
      APPROVABLE,
      () => ({
        status: 'approved',
        rejectionReason: null,
        reviewedByUserId: reviewer.id,
        ...this.stamp(),
      }),
      { withFileOnly: true },
    );
  }

  reject(reviewer: AuthUser, id: number | null, rawReason: string | undefined): Promise<UserPlugin> {
    // The reason is checked once the plugin is known to exist, before its status is.
    return this.transition(id, REJECTABLE, () => ({
      status: 'rejected',
      rejectionReason: validReason(rawReason),
      reviewedByUserId: reviewer.id,
      ...this.stamp(),
    }));
  }

  /** The row goes first: a file left behind by a failed unlink is harmless, a row without its file is not. */
  async remove(id: number | null): Promise<null> {
    const plugin = await findPluginOr404(this.plugins, id);
    if (!(await this.plugins.delete(plugin.id))) throw pluginNotFound();
    await this.storage.remove(plugin.filePath);
    this.logger.log(`Plugin ${plugin.id} (${plugin.name}) deleted`);
    return null;
  }

  /** Built from the row's own timestamps: the upload and, once reviewed, the latest review. */
  async history(id: number | null): Promise<ReviewHistory> {
    const plugin = await findPluginOr404(this.plugins, id);
    const events: ReviewEvent[] = [
      { event: 'uploaded', at: plugin.createdAt.toISOString(), user_id: plugin.userId },
    ];
    if (plugin.status !== 'pending') {
      const review: ReviewEvent = {
        event: plugin.status,
        at: plugin.reviewedAt?.toISOString() ?? null,
        user_id: plugin.reviewedByUserId,
      };
      if (plugin.status === 'rejected') review.reason = plugin.rejectionReason;
      events.push(review);
    }
    return { plugin_id: plugin.id, events };
  }

  /** Marked, so admins see it as broken in their views until the file is back or the plugin is deleted. */
  private async markFileMissing(plugin: UserPlugin): Promise<void> {
    if (await this.plugins.setFileMissing(plugin.id, this.clock.now())) {
      this.logger.error(`Plugin ${plugin.id} (${plugin.name}): its file ${plugin.filePath} is missing`);
    }
  }

  /**
   * The review time is the admins' to see (reviewed_at); updated_at is shown to everyone and
   * stays the uploader's, so a review moves nothing in the public and owner views but status.
   */
  private stamp(): Pick<UserPlugin, 'reviewedAt'> {
    return { reviewedAt: this.clock.now() };
  }

  /**
   * One conditional UPDATE decides, so two admins acting at once cannot both move the
   * plugin out of the same status; the loser is told the status it found.
   */
  private async transition(
    id: number | null,
    from: PluginStatus[],
    change: () => Partial<UserPlugin>,
    options: { withFileOnly?: boolean } = {},
  ): Promise<UserPlugin> {
    const plugin = await findPluginOr404(this.plugins, id);
    if (options.withFileOnly && !(await this.storage.exists(plugin.filePath))) {
      await this.markFileMissing(plugin);
      // A delete racing this approve removed the row before its file: that is a 404.
      if (!(await this.plugins.findById(plugin.id))) throw pluginNotFound();
      throw fileMissing(HttpStatus.CONFLICT);
    }
    const values = change();
    if (!(await this.plugins.updateIfStatusIn(plugin.id, from, values, options))) {
      const current = await this.plugins.findById(plugin.id);
      if (!current) throw pluginNotFound();
      if (options.withFileOnly && current.fileMissingAt !== null && from.includes(current.status)) {
        throw fileMissing(HttpStatus.CONFLICT);
      }
      throw new ApiError(HttpStatus.CONFLICT, `Plugin is already ${current.status}`);
    }
    const reviewed = await this.plugins.findById(plugin.id);
    if (!reviewed) throw pluginNotFound();
    this.logger.log(
      `Plugin ${plugin.id} (${plugin.name}) ${reviewed.status} by user ${String(values.reviewedByUserId)}`,
    );
    return reviewed;
  }
}

export const FILE_MISSING = 'Plugin file is missing';
const fileMissing = (status: HttpStatus) => new ApiError(status, FILE_MISSING);
const modifiedOnDisk = () => new ApiError(HttpStatus.CONFLICT, 'Plugin file was modified on disk');

function validReason(raw: string | undefined): string {
  const reason = raw?.trim();
  if (!reason) throw new ApiError(HttpStatus.BAD_REQUEST, 'Missing rejection reason');
  if ([...reason].length > REJECTION_REASON_MAX_LENGTH) {
    throw new ApiError(
      HttpStatus.BAD_REQUEST,
      `Rejection reason must be at most ${REJECTION_REASON_MAX_LENGTH} characters`,
    );
  }
  if (CONTROL_IN_TEXT.test(reason)) {
    throw new ApiError(HttpStatus.BAD_REQUEST, 'Rejection reason must not contain control characters');
  }
  return reason;
}
