import { HttpStatus, Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../../common/api-error';
import { Clock } from '../../common/clock';
import { isDatabaseUnavailable } from '../../common/database-unavailable';
import type { AuthUser } from '../../common/decorators';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { isDuplicateKeyError } from '../../database/integrity-error';
import { Transactions } from '../../database/transactions';
import { identityKey } from '../../users/identity-key';
import { UsersRepository } from '../../users/users.repository';
import { PLUGIN_FILE_PART } from '../shared/plugin-constants';
import { validateMetadata } from '../shared/plugin-metadata';
import { PluginStorage, PluginStorageError, sha256Hex } from '../files/plugin-storage';
import {
  failedValidation,
  nameExists,
  invalidMetadata,
  storageFailed,
  TOO_MANY_PENDING,
  UploadedPluginFile,
  validatorBusy,
  VERSION_WAITING,
  versionNotGreater,
} from './upload-answers';
import { PluginsRepository } from '../shared/plugins.repository';
import type { UserPlugin } from '../shared/user-plugin.entity';
import { keptWarnings, ValidatorBusyError, ValidatorPool } from '../../plugin-validator';
import type { Violation } from '../../plugin-validator';
import { AuditLog } from '../../audit/audit-log.service';
import { pluginNotFound } from '../shared/plugin-lookup';
import type { PluginVersion } from '../shared/plugin-version.entity';
import { PluginVersionsRepository } from '../shared/plugin-versions.repository';
import { validateVersionFields } from '../shared/plugin-metadata';
import { compareVersions } from './semantic-version';

/**
 * The upload checks after the ones the parser made (extension, size), in the spec's order:
 * metadata, unique name, the static validator. Then the file is written and synced under its
 * final name, and the row inserted; a row that does not commit takes its file with it.
 */
@Injectable()
export class PluginUploadService {
  private readonly logger = new Logger('PluginUpload');

  constructor(
    private readonly plugins: PluginsRepository,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly storage: PluginStorage,
    private readonly clock: Clock,
    private readonly validator: ValidatorPool,
    private readonly versions: PluginVersionsRepository,
    private readonly audit: AuditLog,
  ) {}

  async upload(
    uploader: AuthUser,
    file: UploadedPluginFile | undefined,
    fields: Record<string, unknown> | undefined,
  ): Promise<UserPlugin> {
    if (!file) throw new ApiError(HttpStatus.BAD_REQUEST, `No ${PLUGIN_FILE_PART} provided`);
    const checked = validateMetadata(fields ?? {});
    if (!checked.ok) throw invalidMetadata(HttpStatus.BAD_REQUEST, checked.errors);
    const metadata = checked.metadata;
    if (await this.plugins.nameTaken(metadata.name)) throw nameExists();
    const warnings = await this.checkSource(uploader, file);

    const now = this.clock.now();
    const plugin = this.plugins.create({
      name: metadata.name,
      nameKey: identityKey(metadata.name),
      description: metadata.description,
      group: metadata.group,
      type: metadata.type,
      author: metadata.author,
      status: 'pending',
      rejectionReason: null,
      userId: uploader.id,
      reviewedByUserId: null,
      reviewedAt: null,
      executionTimeout: metadata.executionTimeout,
      version: metadata.version,
      tags: metadata.tags,
      sha256: sha256Hex(file.buffer),
      filePath: '',
      fileMissingAt: null,
      fileAlteredAt: null,
      pendingVersion: metadata.version,
      ratingTotal: 0,
      ratingsCount: 0,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.storage.storeThen(
        file.originalname,
        file.buffer,
        (fileName) => {
          plugin.filePath = fileName;
          return this.transactions.run(async (manager) => {
            // Uploads of one user count and insert one after another, so the cap holds for
            // uploads sent at once, in every process.
            await this.users.lockUser(manager, uploader.id);
            await this.checkPendingCap(uploader.id, manager);
            await this.plugins.insert(manager, plugin);
            // The first upload is the plugin's first version.
            await this.versions.insert(manager, {
              pluginId: plugin.id,
              version: plugin.version,
              sha256: plugin.sha256,
              filePath: fileName,
              changelog: null,
              status: 'pending',
              userId: uploader.id,
              reviewedByUserId: null,
              reviewedAt: null,
              rejectionReason: null,
              createdAt: now,
              validatorWarnings: warnings,
            });
            await this.audit.append(manager, {
              actor: 'user',
              actorUserId: uploader.id,
              action: 'upload',
              subject: `plugin:${plugin.id}`,
              details: { name: plugin.name, version: plugin.version, sha256: plugin.sha256 },
            });
          });
        },
        // The connection died with the insert, which may have committed with only its answer
        // lost (seen by scripts/fault-test.ts): the file stays, and the reconciler removes it
        // later if no row names it.
        isDatabaseUnavailable,
      );
    } catch (error) {
      if (error instanceof PluginStorageError) throw storageFailed(error);
      if (error instanceof ApiError || isDatabaseUnavailable(error)) throw error;
      // Two uploads of one name raced past the check above; the unique index decided.
      if (isDuplicateKeyError(error) && (await this.plugins.nameTaken(metadata.name))) throw nameExists();
      throw error;
    }
    this.logger.log(`Plugin ${plugin.id} (${plugin.name}) uploaded by user ${uploader.id}`);
    return plugin;
  }

  /**
   * A new version of the caller's own plugin, with the upload's checks in the upload's order
   * (the parser checked the extension and the size): the version field, its order and the one
   * waiting for review, then the validator. The file is written and synced, then the row
   * commits under the plugin's lock, where the order and the one-pending rule are checked
   * again, so versions sent at once cannot both pass.
   */
  async uploadVersion(
    uploader: AuthUser,
    id: number | null,
    file: UploadedPluginFile | undefined,
    fields: Record<string, unknown> | undefined,
  ): Promise<UserPlugin> {
    const plugin = id === null ? null : await this.plugins.findById(id);
    if (!plugin || plugin.userId !== uploader.id) throw pluginNotFound();
    if (!file) throw new ApiError(HttpStatus.BAD_REQUEST, `No ${PLUGIN_FILE_PART} provided`);
    const checked = validateVersionFields(fields ?? {});
    if (!checked.ok) throw invalidMetadata(HttpStatus.BAD_REQUEST, checked.errors);
    const { version, changelog } = checked;
    this.checkVersionOrder(plugin, await this.versions.ofPlugin(plugin.id), version);
    const warnings = await this.checkSource(uploader, file);

    const now = this.clock.now();
    const sha256 = sha256Hex(file.buffer);
    try {
      await this.storage.storeThen(
        file.originalname,
        file.buffer,
        (fileName) =>
          this.transactions.run(async (manager) => {
            const current = await this.plugins.lockAndRead(manager, plugin.id);
            if (!current) throw pluginNotFound();
            this.checkVersionOrder(current, await this.versions.ofPlugin(current.id, manager), version);
            await this.versions.insert(manager, {
              pluginId: current.id,
              version,
              sha256,
              filePath: fileName,
              changelog,
              status: 'pending',
              userId: uploader.id,
              reviewedByUserId: null,
              reviewedAt: null,
              rejectionReason: null,
              createdAt: now,
              validatorWarnings: warnings,
            });
            // An approved plugin keeps serving its approved version while this one waits;
            // one never approved now shows its newest version.
            await this.plugins.update(
              manager,
              current.id,
              current.status === 'approved'
                ? { pendingVersion: version }
                : {
                    pendingVersion: version,
                    status: 'pending',
                    version,
                    sha256,
                    filePath: fileName,
                    rejectionReason: null,
                    reviewedByUserId: null,
                    reviewedAt: null,
                    fileMissingAt: null,
                    fileAlteredAt: null,
                    updatedAt: now,
                  },
            );
            await this.audit.append(manager, {
              actor: 'user',
              actorUserId: uploader.id,
              action: 'new_version',
              subject: `plugin:${current.id}`,
              details: { version, sha256, previous: current.version },
            });
          }),
        isDatabaseUnavailable,
      );
    } catch (error) {
      if (error instanceof PluginStorageError) throw storageFailed(error);
      if (error instanceof ApiError || isDatabaseUnavailable(error)) throw error;
      // Two posts of one version raced past the checks; the unique index decided.
      if (isDuplicateKeyError(error)) throw versionNotGreater(version);
      throw error;
    }
    this.logger.log(
      `Plugin ${plugin.id} (${plugin.name}): version ${version} uploaded by user ${uploader.id}`,
    );
    const updated = await this.plugins.findById(plugin.id);
    if (!updated) throw pluginNotFound();
    return updated;
  }

  /** 409 unless the version is above every earlier one and none waits for review. */
  private checkVersionOrder(plugin: UserPlugin, versions: PluginVersion[], version: string): void {
    if (plugin.pendingVersion !== null) throw new ApiError(HttpStatus.CONFLICT, VERSION_WAITING);
    const latest = versions.reduce<string | null>(
      (highest, row) =>
        highest === null || compareVersions(row.version, highest) > 0 ? row.version : highest,
      null,
    );
    if (latest !== null && compareVersions(version, latest) <= 0) {
      throw new ApiError(HttpStatus.CONFLICT, `Version must be greater than ${latest}`);
    }
  }

  /**
   * The static validator, one refusal shape for uploads and new versions (422 with the findings);
   * an accepted file's warnings, kept with its version.
   */
  private async checkSource(uploader: AuthUser, file: UploadedPluginFile): Promise<Violation[]> {
    const verdict = await this.validator
      .validate(file.buffer, String(uploader.id))
      .catch((error: unknown) => {
        if (error instanceof ValidatorBusyError) throw validatorBusy();
        throw error;
      });
    if (!verdict.ok) throw failedValidation(verdict.violations);
    return keptWarnings(verdict.warnings);
  }

  /** 409 once the uploader has as many plugins waiting for review as PLUGIN_MAX_PENDING_PER_USER allows. */
  async checkPendingCap(userId: number, manager?: EntityManager): Promise<void> {
    const pending = await this.plugins.countPending(userId, manager);
    if (pending >= this.config.pluginMaxPendingPerUser) {
      throw new ApiError(HttpStatus.CONFLICT, TOO_MANY_PENDING);
    }
  }
}
