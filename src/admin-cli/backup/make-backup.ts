import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { secretLocations } from '../../config/environment';
import { SECRET_FILES } from '../../config/env-values';
import { COPY_FILE, DatabaseCopy } from '../../database/copy';
import { sha256Hex } from '../../community-plugins/files/plugin-storage';
import {
  BACKUP_FORMAT,
  BackupManifest,
  DIRECTORY_MODE,
  filesUnder,
  markComplete,
  MANIFEST,
  PluginFileEntry,
  SecretEntry,
  sha256OfFile,
  syncDirectory,
  writeDurably,
} from './backup-directory';
import { BackupRepository, FileReference, SnapshotFacts } from './backup.repository';

/** A backup svc-admin will not make: one line saying why. */
export class BackupFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupFailed';
  }
}

/** A file of the snapshot was removed after it: the plugin was deleted meanwhile, so the snapshot is taken again. */
class SnapshotOutrun extends Error {}

/** Plugin deletions are rare; this many in a row during one backup means something else is wrong. */
const ATTEMPTS = 3;

export interface BackupResult {
  manifest: BackupManifest;
  /** Lines for stderr: files the rows name that were missing or differed. */
  notes: string[];
}

/**
 * svc-admin backup: the database copied on one snapshot, then every plugin file its rows name,
 * checked against their digests, and the secrets, into a hidden directory beside the target;
 * renamed into place, then marked complete. A process killed at any point leaves no directory
 * with the marker.
 */
@Injectable()
export class MakeBackup {
  constructor(
    private readonly copy: DatabaseCopy,
    private readonly rows: BackupRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async into(target: string, describeDatabase: string): Promise<BackupResult> {
    const final = resolve(target);
    await this.checkTarget(final);
    if (!(await this.copy.tables()).includes('installation')) {
      throw new BackupFailed(
        `Database ${describeDatabase} has no svc-api tables: there is nothing to back up`,
      );
    }
    for (let attempt = 1; ; attempt += 1) {
      const work = join(dirname(final), `.${basename(final)}.incomplete-${randomBytes(6).toString('hex')}`);
      try {
        const result = await this.attempt(work, describeDatabase);
        await rename(work, final);
        await syncDirectory(dirname(final));
        await markComplete(final);
        return result;
      } catch (error) {
        await rm(work, { recursive: true, force: true });
        if (!(error instanceof SnapshotOutrun) || attempt === ATTEMPTS) {
          if (error instanceof SnapshotOutrun) {
            throw new BackupFailed(
              `Plugins were deleted during each of ${ATTEMPTS} attempts, each time after the database copy: try again`,
            );
          }
          throw error;
        }
      }
    }
  }

  private async checkTarget(final: string): Promise<void> {
    const exists = await stat(final).then(
      () => true,
      (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? false : Promise.reject(error)),
    );
    if (exists) throw new BackupFailed(`${final} already exists: a backup goes into a new directory`);
    const parent = await stat(dirname(final)).catch(() => null);
    if (!parent?.isDirectory()) {
      throw new BackupFailed(
        `${dirname(final)} is not a directory: the backup's directory is made inside it`,
      );
    }
  }

  private async attempt(work: string, describeDatabase: string): Promise<BackupResult> {
    await mkdir(work, { mode: DIRECTORY_MODE });
    for (const part of ['database', 'plugins', 'secrets'])
      await mkdir(join(work, part), { mode: DIRECTORY_MODE });
    const facts = await this.copy.copyInto(join(work, 'database'), BackupRepository.factsOf);
    const notes: string[] = [];
    const { copied, missing } = await this.copyPluginFiles(facts, join(work, 'plugins'), notes);
    const secrets = await this.copySecrets(join(work, 'secrets'));
    const files: BackupManifest['files'] = {};
    for (const file of await filesUnder(work)) files[file] = await sha256OfFile(join(work, file));
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      created_at: new Date().toISOString(),
      database: {
        type: this.copy.kind,
        source: describeDatabase,
        file: `database/${COPY_FILE[this.copy.kind]}`,
        migrations: facts.migrations,
        installation: facts.installation,
      },
      plugin_files: copied,
      missing_plugin_files: missing,
      secrets,
      files,
    };
    await writeDurably(join(work, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const part of ['database', 'plugins', 'secrets', '.']) await syncDirectory(join(work, part));
    return { manifest, notes };
  }

  /**
   * Each file once, whatever number of rows name it. Its digest is checked against every row
   * that records one. A file gone since the snapshot whose rows are gone too was deleted
   * meanwhile: the snapshot is taken again (SnapshotOutrun). One gone while a row still names
   * it is missing from the service itself: noted, and the copy says so as the rows will.
   */
  private async copyPluginFiles(
    facts: SnapshotFacts,
    into: string,
    notes: string[],
  ): Promise<{ copied: PluginFileEntry[]; missing: PluginFileEntry[] }> {
    const byFile = new Map<string, FileReference[]>();
    for (const reference of facts.references) {
      byFile.set(reference.file, [...(byFile.get(reference.file) ?? []), reference]);
    }
    const copied: PluginFileEntry[] = [];
    const missing: PluginFileEntry[] = [];
    const directory = resolve(this.config.communityPluginDir);
    for (const [file, references] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
      const entry = { name: file, rows: references.map((reference) => reference.row) };
      if (!isPlainName(file)) {
        notes.push(
          `Rows ${entry.rows.join(', ')} name a plugin file outside the plugin directory (${file}): not copied`,
        );
        missing.push(entry);
        continue;
      }
      let content: Buffer;
      try {
        content = await readFile(join(directory, file));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        if (!(await this.rows.stillNamed(file))) throw new SnapshotOutrun();
        if (!references.some((reference) => reference.markedMissing)) {
          notes.push(
            `Plugin file ${file} (${entry.rows.join(', ')}) is missing from ${directory}: not in the backup`,
          );
        }
        missing.push(entry);
        continue;
      }
      const digest = sha256Hex(content);
      for (const reference of references) {
        if (reference.sha256 !== null && reference.sha256 !== digest) {
          notes.push(
            `Plugin file ${file} has sha256 ${digest}, ${reference.row} records ${reference.sha256}: copied as it is (svc-admin plugins verify names it)`,
          );
        }
      }
      await writeDurably(join(into, file), content);
      copied.push(entry);
    }
    return { copied, missing };
  }

  /** The secrets the service signs with, as this process read them (from the environment or data/). */
  private async copySecrets(into: string): Promise<SecretEntry[]> {
    const where = secretLocations();
    const secrets: Array<[SecretEntry['setting'], string]> = [
      ['JWT_SECRET', `${this.config.jwt.secret}\n`],
      ['PLUGIN_MANIFEST_KEY', this.config.pluginManifestKey],
    ];
    const entries: SecretEntry[] = [];
    for (const [setting, content] of secrets) {
      const name = SECRET_FILES[setting];
      await writeDurably(join(into, name), content);
      const file = where[setting];
      entries.push({
        setting,
        from: file === null ? 'the environment' : resolve(file),
        file: `secrets/${name}`,
      });
    }
    return entries;
  }
}

/** A stored name is one path segment; anything else is not followed out of the plugin directory. */
export const isPlainName = (name: string): boolean =>
  name !== '' && name !== '.' && name !== '..' && basename(name) === name && !name.includes('\\');
