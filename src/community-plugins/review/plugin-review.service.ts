import { HttpStatus, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../../audit/audit-log.service';
import { ApiError } from '../../common/api-error';
import type { AuthUser } from '../../common/decorators';
import { Clock } from '../../common/clock';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { retryOnDeadlock } from '../../database/deadlock';
import { Transactions } from '../../database/transactions';
import { MailService } from '../../mail/mail.service';
import { Outbox } from '../../outbox/outbox.service';
import { UsersRepository } from '../../users/users.repository';
import { UsersService } from '../../users/users.service';
import { findPluginOr404, pluginNotFound } from '../shared/plugin-lookup';
import { versionDecidedMail } from './plugin-mails';
import { PluginStorage, sha256Hex } from '../files/plugin-storage';
import type { PluginVersion } from '../shared/plugin-version.entity';
import { PluginVersionsRepository } from '../shared/plugin-versions.repository';
import { PluginsRepository } from '../shared/plugins.repository';
import { PluginFilesRepository } from '../files/plugin-files.repository';
import type { UserPlugin } from '../shared/user-plugin.entity';
import type { PluginSource, ReviewEvent, ReviewHistory } from '../dto/plugin.dto';
import {
  ALREADY_APPROVED_BY_YOU,
  Decision,
  ExpectedVersion,
  fileMissing,
  modifiedOnDisk,
  READ_FIRST,
  Readable,
  refuseOtherVersion,
  SELF_REVIEW,
  servedVersion,
  validReason,
  VERSION_CHANGED,
  VERSION_NOT_FOUND,
  versionToApprove,
} from './review-rules';

export type { PluginSource, ReviewEvent, ReviewHistory };

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
    private readonly pluginFiles: PluginFilesRepository,
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

  /**
   * The source of the version approve would act on (the one waiting; a rejected plugin's own
   * version; else the approved one served), or of `versionText`, read through its digest
   * check. The read is recorded before the answer leaves: a body-less approve acts only on
   * bytes the approving admin fetched.
   */
  async source(reader: AuthUser, id: number | null, versionText?: string): Promise<PluginSource> {
    const plugin = await findPluginOr404(this.plugins, id);
    const versions = await this.versions.ofPlugin(plugin.id);
    const version: Readable | undefined =
      versionText === undefined
        ? (versionToApprove(plugin, versions) ?? servedVersion(plugin, versions) ?? plugin)
        : versions.find((row) => row.version === versionText);
    if (!version) throw new ApiError(HttpStatus.NOT_FOUND, VERSION_NOT_FOUND);
    const content = await this.verifiedContent(plugin, version.filePath, version.sha256, HttpStatus.GONE);
    const sha256 = sha256Hex(content);
    await this.recordRead(reader, plugin.id, version, sha256);
    return {
      id: plugin.id,
      name: plugin.name,
      version: version.version,
      sha256,
      source_code: content.toString('utf8'),
    };
  }

  /**
   * An admin fetched these bytes (the source, or a diff that shows them): recorded under the
   * plugin's row lock, and only when no decision on the version landed since it was picked, so
   * a read served while a rejection committed never outlives the rejection (which drops the
   * reads it finds).
   */
  async recordRead(reader: AuthUser, pluginId: number, seen: Readable, sha256: string): Promise<void> {
    await this.transactions.run(async (manager) => {
      if (!(await this.plugins.lockAndRead(manager, pluginId))) throw pluginNotFound();
      const now = await this.versions.find(pluginId, seen.version, manager);
      const decidedSince =
        now !== null &&
        (now.status !== seen.status || now.reviewedAt?.getTime() !== seen.reviewedAt?.getTime());
      if (decidedSince) return;
      await this.versions.recordRead(manager, reader.id, pluginId, seen.version, sha256, this.clock.now());
    });
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
   * What an admin approves is exactly what that admin read: the version's file must have its
   * recorded digest, and the approver must have fetched those bytes (source or diff), checked
   * under the plugin's row lock in the transaction that records the approval. With
   * PLUGIN_APPROVALS_REQUIRED above 1 the approval is counted and the version stays pending
   * until enough admins have approved it; an approval counts only while its admin is an admin
   * in service, judged at the approval that decides.
   */
  async approve(reviewer: AuthUser, id: number | null, expected: ExpectedVersion = {}): Promise<UserPlugin> {
    const plugin = await findPluginOr404(this.plugins, id);
    const target = await this.versionToDecide(plugin, 'approve');
    refuseOtherVersion(target, expected, 'approve');
    await this.verifiedContent(plugin, target.filePath, target.sha256, HttpStatus.CONFLICT);
    return this.decide(reviewer, plugin.id, target, 'approve', expected, async (manager, current) => {
      if (
        target.sha256 === null ||
        !(await this.versions.hasRead(manager, reviewer.id, current.id, target.sha256))
      ) {
        throw new ApiError(HttpStatus.CONFLICT, READ_FIRST.replace('<version>', target.version));
      }
      if (await this.versions.hasApproved(manager, target.id, reviewer.id)) {
        throw new ApiError(HttpStatus.CONFLICT, ALREADY_APPROVED_BY_YOU);
      }
      const now = this.clock.now();
      await this.versions.addApproval(manager, target.id, reviewer.id, now);
      const approvals = (await this.versions.approvers(manager, target.id)).filter(
        (approver) => approver.inService && this.userRules.isAdmin(approver),
      ).length;
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

  async reject(
    reviewer: AuthUser,
    id: number | null,
    rawReason: string | undefined,
    expected: ExpectedVersion = {},
  ): Promise<UserPlugin> {
    const plugin = await findPluginOr404(this.plugins, id);
    // The reason is checked once the plugin is known to exist, before its status is.
    const reason = validReason(rawReason);
    const target = await this.versionToDecide(plugin, 'reject');
    refuseOtherVersion(target, expected, 'reject');
    return this.decide(reviewer, plugin.id, target, 'reject', expected, async (manager, current) => {
      const review = { reviewedByUserId: reviewer.id, reviewedAt: this.clock.now(), rejectionReason: reason };
      await this.versions.setReview(manager, target.id, { status: 'rejected', ...review });
      await this.versions.clearApprovals(manager, target.id);
      // A read from before the rejection approves nothing: re-approving takes a read made since.
      if (target.sha256 !== null) await this.versions.dropReads(manager, current.id, target.sha256);
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
   * The version a decision acts on: the one waiting; else, to approve, the version a rejected
   * plugin shows (for a revoked plugin the revoked one, never a newer update an admin
   * rejected); to reject, the approved version the catalogue serves (a revocation).
   */
  private async versionToDecide(
    plugin: UserPlugin,
    decision: Decision,
    manager?: EntityManager,
  ): Promise<PluginVersion> {
    const versions = await this.versions.ofPlugin(plugin.id, manager);
    let target: PluginVersion | undefined;
    if (decision === 'approve') {
      target = versionToApprove(plugin, versions);
    } else if (plugin.pendingVersion !== null) {
      target = versions.find((version) => version.version === plugin.pendingVersion);
    } else if (plugin.status === 'approved') {
      target = servedVersion(plugin, versions);
    }
    if (!target) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        `Plugin is already ${decision === 'approve' ? 'approved' : 'rejected'}`,
      );
    }
    return target;
  }

  /**
   * The rule compares people, not accounts: a reviewer whose address reaches the mailbox of
   * the plugin's uploader or of the version's (`Alice+x@` for `alice@`) is refused too. Asked
   * in the decision's transaction, of the version it decides; the test-runs ask it too, in the
   * transaction that records a run, and before a run is read.
   */
  async refuseSelfReview(
    manager: EntityManager,
    reviewer: AuthUser,
    plugin: UserPlugin,
    version: PluginVersion,
  ): Promise<void> {
    if (await this.isSelfReview(manager, reviewer, plugin, version)) {
      throw new ApiError(HttpStatus.FORBIDDEN, SELF_REVIEW);
    }
  }

  /** The rule of refuseSelfReview as a question: the diff hides the test-runs from such a reader. */
  async isSelfReview(
    manager: EntityManager,
    reviewer: AuthUser,
    plugin: UserPlugin,
    version: PluginVersion,
  ): Promise<boolean> {
    if (this.config.pluginSelfReview !== 'forbidden') return false;
    return this.users.sharesMailbox(manager, reviewer.id, [plugin.userId, version.userId]);
  }

  /**
   * Under the plugin's row lock the version to decide is looked up again: a decision or a new
   * version that landed since the checks above makes this one a 409, never a second outcome.
   * The reviewer's own plugins are refused here, in the transaction that decides.
   */
  private async decide(
    reviewer: AuthUser,
    pluginId: number,
    checked: PluginVersion,
    decision: Decision,
    expected: ExpectedVersion,
    apply: (manager: EntityManager, current: UserPlugin) => Promise<void>,
  ): Promise<UserPlugin> {
    await retryOnDeadlock(() =>
      this.transactions.run(async (manager) => {
        const current = await this.plugins.lockAndRead(manager, pluginId);
        if (!current) throw pluginNotFound();
        const target = await this.versionToDecide(current, decision, manager);
        refuseOtherVersion(target, expected, decision);
        if (target.id !== checked.id || target.status !== checked.status) {
          throw new ApiError(HttpStatus.CONFLICT, VERSION_CHANGED);
        }
        await this.refuseSelfReview(manager, reviewer, current, target);
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
    if (await this.pluginFiles.setFileMissing(plugin.id, this.clock.now())) {
      this.logger.error(`Plugin ${plugin.id} (${plugin.name}): its file ${plugin.filePath} is missing`);
    }
  }
}
