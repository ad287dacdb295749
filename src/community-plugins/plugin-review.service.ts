import { HttpStatus, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service';
import { ApiError } from '../common/api-error';
import type { AuthUser } from '../common/decorators';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { retryOnDeadlock } from '../database/deadlock';
import { Transactions } from '../database/transactions';
import { MailService } from '../mail/mail.service';
import { Outbox } from '../outbox/outbox.service';
import { UsersRepository } from '../users/users.repository';
import { UsersService } from '../users/users.service';
import { REJECTION_REASON_MAX_LENGTH } from './plugin-constants';
import { findPluginOr404, pluginNotFound } from './plugin-lookup';
import { versionDecidedMail } from './plugin-mails';
import { PluginStorage, sha256Hex } from './plugin-storage';
import type { PluginVersion } from './plugin-version.entity';
import { PluginVersionsRepository } from './plugin-versions.repository';
import { PluginsRepository } from './plugins.repository';
import type { UserPlugin } from './user-plugin.entity';
import { CONTROL_IN_TEXT } from './plugin-metadata';
import type { PluginSource, ReviewEvent, ReviewHistory } from './dto/plugin.dto';

export type { PluginSource, ReviewEvent, ReviewHistory };

type Decision = 'approve' | 'reject';

export const SELF_REVIEW = 'Admins cannot review their own plugins';
export const ALREADY_APPROVED_BY_YOU = 'You have already approved this version';
export const VERSION_CHANGED = 'The version waiting for review changed; look again';

/**
 * What admins do: read the source, approve, reject, delete, read the review timeline.
 * Approve and reject act on the version that waits for review (a plugin's first upload is its
 * first version); with none waiting, approve re-approves a rejected plugin's newest version and
 * reject revokes the approved one, as the spec's review of a plugin did.
 */
@Injectable()
export class PluginReviewService implements OnApplicationBootstrap {
  private readonly logger = new Logger('PluginReview');

  constructor(
    private readonly plugins: PluginsRepository,
    private readonly versions: PluginVersionsRepository,
    private readonly storage: PluginStorage,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly mail: MailService,
    private readonly outbox: Outbox,
    private readonly users: UsersRepository,
    private readonly userRules: UsersService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A fresh install has no admins, so a count the admins cannot meet is a warning, not a refusal. */
  async onApplicationBootstrap(): Promise<void> {
    const admins = (await this.userRules.listAdmins()).length;
    if (this.config.pluginApprovalsRequired > admins) {
      this.logger.warn(
        `PLUGIN_APPROVALS_REQUIRED is ${this.config.pluginApprovalsRequired} but there are ${admins} admin(s): ` +
          'no plugin version can be approved until there are enough admins who did not upload it',
      );
    }
  }

  /** The file as it is on disk, refused when it is no longer the file that was uploaded. */
  async source(id: number | null): Promise<PluginSource> {
    const plugin = await findPluginOr404(this.plugins, id);
    const content = await this.verifiedContent(plugin, plugin.filePath, plugin.sha256, HttpStatus.GONE);
    return {
      id: plugin.id,
      name: plugin.name,
      sha256: sha256Hex(content),
      source_code: content.toString('utf8'),
    };
  }

  /**
   * The bytes of a file, refused unless they are the ones recorded: 409 when they changed,
   * `missingStatus` (410 to read, 409 to approve) when the file is gone.
   */
  async verifiedContent(
    plugin: UserPlugin,
    filePath: string,
    sha256: string | null,
    missingStatus: HttpStatus,
  ): Promise<Buffer> {
    const content = await this.storage.read(filePath);
    if (content === null) {
      if (!(await this.storage.exists(filePath))) {
        await this.markFileMissing(plugin, filePath);
        // A delete racing this request removed the row before its file: that is a 404.
        if (!(await this.plugins.findById(plugin.id))) throw pluginNotFound();
        throw fileMissing(missingStatus);
      }
      this.logger.warn(`Plugin ${plugin.id} (${plugin.name}): its file is not a regular file or too large`);
      throw modifiedOnDisk();
    }
    const actual = sha256Hex(content);
    if (sha256 === null) {
      this.logger.warn(
        `Plugin ${plugin.id} (${plugin.name}) has no recorded hash; serving its file unverified`,
      );
    } else if (actual !== sha256) {
      this.logger.warn(
        `Plugin ${plugin.id} (${plugin.name}): file hash ${actual} no longer matches the recorded ${sha256}`,
      );
      throw modifiedOnDisk();
    }
    return content;
  }

  /**
   * What an admin approves is exactly what an admin could read: the version's file must have
   * its recorded digest. With PLUGIN_APPROVALS_REQUIRED above 1 the approval is counted and
   * the version stays pending until enough distinct admins have approved it.
   */
  async approve(reviewer: AuthUser, id: number | null): Promise<UserPlugin> {
    const plugin = await findPluginOr404(this.plugins, id);
    const target = await this.versionToDecide(plugin, 'approve');
    this.refuseSelfReview(reviewer, target);
    await this.verifiedContent(plugin, target.filePath, target.sha256, HttpStatus.CONFLICT);
    return this.decide(plugin.id, target, 'approve', async (manager, current) => {
      if (await this.versions.hasApproved(manager, target.id, reviewer.id)) {
        throw new ApiError(HttpStatus.CONFLICT, ALREADY_APPROVED_BY_YOU);
      }
      const now = this.clock.now();
      const approvals = await this.versions.addApproval(manager, target.id, reviewer.id, now);
      const required = this.config.pluginApprovalsRequired;
      const decided = approvals >= required;
      if (decided) {
        const review = { reviewedByUserId: reviewer.id, reviewedAt: now, rejectionReason: null };
        await this.versions.setReview(manager, target.id, { status: 'approved', ...review });
        await this.plugins.update(manager, current.id, {
          status: 'approved',
          version: target.version,
          sha256: target.sha256,
          filePath: target.filePath,
          pendingVersion: current.pendingVersion === target.version ? null : current.pendingVersion,
          fileMissingAt: null,
          fileAlteredAt: null,
          updatedAt: target.createdAt,
          ...review,
        });
        await this.queueMail(manager, current, target, { status: 'approved' });
      }
      await this.audit.append(manager, {
        actor: 'user',
        actorUserId: reviewer.id,
        action: 'approve',
        subject: `plugin:${current.id}`,
        details: { version: target.version, sha256: target.sha256, approvals, required, approved: decided },
      });
    });
  }

  async reject(reviewer: AuthUser, id: number | null, rawReason: string | undefined): Promise<UserPlugin> {
    const plugin = await findPluginOr404(this.plugins, id);
    // The reason is checked once the plugin is known to exist, before its status is.
    const reason = validReason(rawReason);
    const target = await this.versionToDecide(plugin, 'reject');
    this.refuseSelfReview(reviewer, target);
    return this.decide(plugin.id, target, 'reject', async (manager, current) => {
      const review = { reviewedByUserId: reviewer.id, reviewedAt: this.clock.now(), rejectionReason: reason };
      await this.versions.setReview(manager, target.id, { status: 'rejected', ...review });
      await this.versions.clearApprovals(manager, target.id);
      const revoking = current.pendingVersion !== target.version;
      if (revoking || current.status !== 'approved') {
        // A revoked plugin, or one never approved: the plugin is rejected and leaves the catalogue at once.
        await this.plugins.update(manager, current.id, {
          status: 'rejected',
          pendingVersion: null,
          ...review,
        });
      } else {
        // An update refused: the approved version stays in the catalogue.
        await this.plugins.update(manager, current.id, { pendingVersion: null });
      }
      await this.queueMail(manager, current, target, { status: 'rejected', reason });
      await this.audit.append(manager, {
        actor: 'user',
        actorUserId: reviewer.id,
        action: 'reject',
        subject: `plugin:${current.id}`,
        details: { version: target.version, sha256: target.sha256, reason, revoked: revoking },
      });
    });
  }

  /** The rows go first, in one transaction with the audit entry: a file left behind by a failed unlink is harmless, a row without its file is not. */
  async remove(deleter: AuthUser, id: number | null): Promise<null> {
    const plugin = await findPluginOr404(this.plugins, id);
    const files = await retryOnDeadlock(() =>
      this.transactions.run(async (manager) => {
        const current = await this.plugins.lockAndRead(manager, plugin.id);
        if (!current) throw pluginNotFound();
        const versions = await this.versions.ofPlugin(current.id, manager);
        await this.plugins.delete(manager, current.id);
        await this.audit.append(manager, {
          actor: 'user',
          actorUserId: deleter.id,
          action: 'delete',
          subject: `plugin:${current.id}`,
          details: {
            name: current.name,
            status: current.status,
            version: current.version,
            sha256: current.sha256,
          },
        });
        return new Set([current.filePath, ...versions.map((version) => version.filePath)]);
      }),
    );
    for (const file of files) await this.storage.remove(file);
    this.logger.log(`Plugin ${plugin.id} (${plugin.name}) deleted by user ${deleter.id}`);
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

  /**
   * The version a decision acts on: the one waiting; else, to approve, a rejected plugin's
   * newest version; to reject, the approved version the catalogue serves (a revocation).
   */
  private async versionToDecide(
    plugin: UserPlugin,
    decision: Decision,
    manager?: EntityManager,
  ): Promise<PluginVersion> {
    const versions = await this.versions.ofPlugin(plugin.id, manager);
    let target: PluginVersion | undefined;
    if (plugin.pendingVersion !== null) {
      target = versions.find((version) => version.version === plugin.pendingVersion);
    } else if (decision === 'approve' && plugin.status === 'rejected') {
      target = versions[0];
    } else if (decision === 'reject' && plugin.status === 'approved') {
      target = versions.find((version) => version.version === plugin.version) ?? versions[0];
    }
    if (!target) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        `Plugin is already ${decision === 'approve' ? 'approved' : 'rejected'}`,
      );
    }
    return target;
  }

  private refuseSelfReview(reviewer: AuthUser, version: PluginVersion): void {
    if (this.config.pluginSelfReview === 'forbidden' && version.userId === reviewer.id) {
      throw new ApiError(HttpStatus.FORBIDDEN, SELF_REVIEW);
    }
  }

  /**
   * Under the plugin's row lock the version to decide is looked up again: a decision or a new
   * version that landed since the checks above makes this one a 409, never a second outcome.
   */
  private async decide(
    pluginId: number,
    checked: PluginVersion,
    decision: Decision,
    apply: (manager: EntityManager, current: UserPlugin) => Promise<void>,
  ): Promise<UserPlugin> {
    await retryOnDeadlock(() =>
      this.transactions.run(async (manager) => {
        const current = await this.plugins.lockAndRead(manager, pluginId);
        if (!current) throw pluginNotFound();
        const target = await this.versionToDecide(current, decision, manager);
        if (target.id !== checked.id || target.status !== checked.status) {
          throw new ApiError(HttpStatus.CONFLICT, VERSION_CHANGED);
        }
        await apply(manager, current);
      }),
    );
    this.outbox.nudge();
    const decided = await this.plugins.findById(pluginId);
    if (!decided) throw pluginNotFound();
    this.logger.log(`Plugin ${pluginId} (${decided.name}) ${checked.version}: ${decision} recorded`);
    return decided;
  }

  private async queueMail(
    manager: EntityManager,
    plugin: UserPlugin,
    version: PluginVersion,
    decision: { status: 'approved' } | { status: 'rejected'; reason: string },
  ): Promise<void> {
    const uploader = await this.users.findById(version.userId, manager);
    if (!uploader) return;
    await this.mail.queue(manager, versionDecidedMail(uploader.email, plugin, version.version, decision));
  }

  /** Marked, so admins see it as broken in their views until the file is back or the plugin is deleted. */
  private async markFileMissing(plugin: UserPlugin, filePath: string): Promise<void> {
    // Only the served file's absence breaks the plugin; a waiting version's is refused on its own.
    if (filePath !== plugin.filePath) return;
    if (await this.plugins.setFileMissing(plugin.id, this.clock.now())) {
      this.logger.error(`Plugin ${plugin.id} (${plugin.name}): its file ${plugin.filePath} is missing`);
    }
  }
}

export const FILE_MISSING = 'Plugin file is missing';
export const MODIFIED_ON_DISK = 'Plugin file was modified on disk';
const fileMissing = (status: HttpStatus) => new ApiError(status, FILE_MISSING);
const modifiedOnDisk = () => new ApiError(HttpStatus.CONFLICT, MODIFIED_ON_DISK);

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
