import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QueryFailedError, Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { isDatabaseUnavailable } from '../common/database-unavailable';
import type { AuthUser } from '../common/decorators';
import { PLUGIN_FILE_PART } from './plugin-constants';
import { validateMetadata } from './plugin-metadata';
import { PluginStorage, sha256Hex } from './plugin-storage';
import { INVALID_METADATA } from './plugin-upload.interceptor';
import { UserPlugin } from './user-plugin.entity';
import { ValidatorPool } from './validator';

/** The parsed upload as the multipart interceptor leaves it on the request. */
export interface UploadedPluginFile {
  originalname: string;
  buffer: Buffer;
}

/**
 * The upload checks after the ones the parser made (extension, size), in the spec's order:
 * metadata, unique name, the static validator. Then the file is staged, the row inserted,
 * and only a committed row gets its file renamed into place.
 */
@Injectable()
export class PluginUploadService {
  private readonly logger = new Logger('PluginUpload');

  constructor(
    @InjectRepository(UserPlugin) private readonly plugins: Repository<UserPlugin>,
    private readonly storage: PluginStorage,
    private readonly clock: Clock,
    private readonly validator: ValidatorPool,
  ) {}

  async upload(
    uploader: AuthUser,
    file: UploadedPluginFile | undefined,
    fields: Record<string, unknown> | undefined,
  ): Promise<UserPlugin> {
    if (!file) throw new ApiError(HttpStatus.BAD_REQUEST, `No ${PLUGIN_FILE_PART} provided`);
    const checked = validateMetadata(fields ?? {});
    if (!checked.ok) throw new ApiError(HttpStatus.BAD_REQUEST, INVALID_METADATA, checked.errors);
    const metadata = checked.metadata;
    if (await this.nameTaken(metadata.name)) throw nameExists();
    const verdict = await this.validator.validate(file.buffer);
    if (!verdict.ok)
      throw new ApiError(HttpStatus.UNPROCESSABLE_ENTITY, 'Plugin failed validation', verdict.violations);

    const staged = await this.storage.stage(file.originalname, file.buffer);
    const now = this.clock.now();
    const plugin = this.plugins.create({
      name: metadata.name,
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
      sha256: sha256Hex(file.buffer),
      filePath: staged.fileName,
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.plugins.insert(plugin);
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        // The connection died with the insert, which may have committed with only its answer
        // lost (seen by scripts/fault-test.ts). Put the file in place as for a committed row:
        // a file without a row is harmless, a row without its file is a plugin nobody can review.
        await this.storage.commit(staged).catch(() => this.storage.discard(staged));
        throw error;
      }
      await this.storage.discard(staged);
      // Two uploads of one name raced past the check above; the unique index decided.
      if (error instanceof QueryFailedError && (await this.nameTaken(metadata.name))) throw nameExists();
      throw error;
    }
    try {
      await this.storage.commit(staged);
    } catch (error) {
      // Without its file the row would be a plugin nobody can review: take it back.
      await this.plugins.delete({ id: plugin.id });
      await this.storage.discard(staged);
      throw error;
    }
    this.logger.log(`Plugin ${plugin.id} (${plugin.name}) uploaded by user ${uploader.id}`);
    return plugin;
  }

  /** Names compare without case on every database, as the unique index does. */
  private async nameTaken(name: string): Promise<boolean> {
    return this.plugins
      .createQueryBuilder('plugin')
      .where('LOWER(plugin.name) = LOWER(:name)', { name })
      .getExists();
  }
}

const nameExists = () => new ApiError(HttpStatus.CONFLICT, 'Plugin name already exists');
