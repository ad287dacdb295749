import { Inject, Injectable } from '@nestjs/common';
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { migrations } from '../../../migrations';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { DatabaseCopy } from '../../database/copy';
import { SchemaMigrator } from '../../database/schema-migrator';
import { PluginStorage } from '../../community-plugins/files/plugin-storage';
import {
  BackupManifest,
  BackupRefused,
  syncDirectory,
  verifiedManifest,
  writeDurably,
} from './backup-directory';
import { isPlainName } from './make-backup';

const KNOWN_MIGRATIONS = new Set(migrations.map((migration) => migration.name));
const KIND_NAMES = { sqlite: 'SQLite', mysql: 'MySQL/MariaDB' } as const;

export interface RestoreResult {
  manifest: BackupManifest;
  /** Lines for stderr: secrets that differ from the backup's, files the backup lacked. */
  notes: string[];
}

/**
 * svc-admin restore: a verified backup into an empty database and an empty plugin directory.
 * Everything is checked before anything is written: the backup's digests, its kind and schema,
 * the emptiness of both targets.
 */
@Injectable()
export class RestoreBackup {
  constructor(
    private readonly copy: DatabaseCopy,
    private readonly schema: SchemaMigrator,
    private readonly storage: PluginStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get pluginDirectory(): string {
    return this.storage.directory;
  }

  async from(source: string, describeDatabase: string): Promise<RestoreResult> {
    const directory = resolve(source);
    const manifest = await verifiedManifest(directory);
    const kind = manifest.database.type;
    if (kind !== this.copy.kind) {
      throw new BackupRefused(
        `${directory} is a backup of a ${KIND_NAMES[kind]} database; ${describeDatabase} is ${KIND_NAMES[this.copy.kind]}: restore into the same kind`,
      );
    }
    const unknown = manifest.database.migrations.filter((name) => !KNOWN_MIGRATIONS.has(name));
    if (unknown.length > 0) {
      throw new BackupRefused(
        `${directory} has a newer schema than this svc-admin knows (migration ${unknown[0]}): restore with the version that made it`,
      );
    }
    const tables = await this.copy.tables();
    if (tables.length > 0) {
      throw new BackupRefused(
        `Database ${describeDatabase} is not empty (${tables.length} tables): restore goes only into an empty database`,
      );
    }
    const pluginDir = this.storage.directory;
    const present = await readdir(pluginDir).catch((error: NodeJS.ErrnoException) =>
      error.code === 'ENOENT' ? [] : Promise.reject(error),
    );
    if (present.length > 0) {
      throw new BackupRefused(
        `COMMUNITY_PLUGIN_DIR ${pluginDir} is not empty (${present.length} entries): restore goes only into an empty plugin directory`,
      );
    }
    for (const entry of manifest.plugin_files) {
      if (!isPlainName(entry.name))
        throw new BackupRefused(`${directory} names a plugin file outside its plugins/: ${entry.name}`);
    }

    await this.copy.restoreFrom(join(directory, 'database'));
    // An older backup is brought up to this version's schema, as the API would at its start.
    await this.schema.bringUpToDate();
    // The marker names the restored installation before any file goes in (see PluginDirectoryClaim).
    await this.storage.claim();
    for (const entry of manifest.plugin_files) {
      await writeDurably(join(pluginDir, entry.name), await readFile(join(directory, 'plugins', entry.name)));
    }
    await syncDirectory(pluginDir);
    return { manifest, notes: await this.notes(directory, manifest) };
  }

  private async notes(directory: string, manifest: BackupManifest): Promise<string[]> {
    const notes = manifest.missing_plugin_files.map(
      (entry) =>
        `Plugin file ${entry.name} (${entry.rows.join(', ')}) was missing when the backup was made: restored without it`,
    );
    const current = {
      JWT_SECRET: `${this.config.jwt.secret}\n`,
      PLUGIN_MANIFEST_KEY: this.config.pluginManifestKey,
    };
    const consequence = {
      JWT_SECRET: 'tokens issued before the backup are refused (everyone logs in again)',
      PLUGIN_MANIFEST_KEY: 'frameworks that pinned the manifest’s public key refuse the new one',
    };
    for (const secret of manifest.secrets) {
      if ((await readFile(join(directory, secret.file), 'utf8')) === current[secret.setting]) continue;
      notes.push(
        `Warning: ${secret.setting} here is not the backup's, so ${consequence[secret.setting]}: ` +
          `give the service the one in ${join(directory, secret.file)} (it was read from ${secret.from})`,
      );
    }
    return notes;
  }
}
