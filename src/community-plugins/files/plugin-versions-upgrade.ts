import { Injectable, Logger } from '@nestjs/common';
import { retryOnDeadlock } from '../../database/deadlock';
import { PluginStorage, sha256Hex } from './plugin-storage';
import { PluginVersionsRepository } from '../shared/plugin-versions.repository';
import { PluginFilesRepository } from './plugin-files.repository';

/**
 * The start-up half of the upgrade to versions: a plugin written without one (by a replica
 * still on older code) becomes its own first version, as the migration did for the rest, and
 * a version without a digest (from a row older than hashes) gets the digest of its file, which
 * is what an admin approved. A file that is missing keeps a null digest and is never listed.
 */
@Injectable()
export class PluginVersionsUpgrade {
  private readonly logger = new Logger('PluginVersions');

  constructor(
    private readonly plugins: PluginFilesRepository,
    private readonly versions: PluginVersionsRepository,
    private readonly storage: PluginStorage,
  ) {}

  /**
   * Every step is idempotent, so a run that loses a write to another replica's (a Galera
   * certification conflict while that replica serves) runs again rather than failing the start.
   */
  run(): Promise<void> {
    return retryOnDeadlock(() => this.runOnce());
  }

  private async runOnce(): Promise<void> {
    await this.versions.createFirstVersions();
    for (const version of await this.versions.withoutDigest()) {
      const content = await this.storage.read(version.filePath);
      if (content === null) continue;
      const sha256 = sha256Hex(content);
      await this.versions.setDigest(version.id, sha256);
      await this.plugins.setDigestIfUnset(version.pluginId, version.filePath, sha256);
      this.logger.log(
        `Plugin ${version.pluginId} version ${version.version}: digest ${sha256} computed from its file`,
      );
    }
  }
}
