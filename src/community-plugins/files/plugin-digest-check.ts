import { Injectable } from '@nestjs/common';
import { PluginStorage, sha256Hex } from './plugin-storage';
import { PluginFilesRepository } from './plugin-files.repository';

export interface DigestCheck {
  /** Approved plugins whose file was hashed. */
  checked: number;
  /** One line per approved file that is missing or differs from its recorded digest. */
  problems: string[];
}

/** Every approved file on disk hashed and compared with the digest its approval recorded (svc-admin plugins verify). */
@Injectable()
export class PluginDigestCheck {
  constructor(
    private readonly plugins: PluginFilesRepository,
    private readonly storage: PluginStorage,
  ) {}

  async verify(): Promise<DigestCheck> {
    const problems: string[] = [];
    const approved = await this.plugins.approvedFiles();
    for (const plugin of approved) {
      const label = `Plugin ${plugin.id} (${plugin.name}): ${plugin.filePath}`;
      const content = await this.storage.read(plugin.filePath);
      if (content === null) {
        problems.push(`${label} is missing`);
      } else if (plugin.sha256 === null) {
        problems.push(`${label} has no recorded digest`);
      } else if (sha256Hex(content) !== plugin.sha256) {
        problems.push(`${label} differs: sha256 ${sha256Hex(content)}, approved ${plugin.sha256}`);
      }
    }
    return { checked: approved.length, problems };
  }
}
