import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { Installation } from '../../database/installation';
import { LEGACY_TEMPORARY_NAME, STORED_FILE_NAME } from './plugin-file-names';
import { PluginFilesRepository } from './plugin-files.repository';

/** The marker naming the database a plugin directory belongs to. Hidden: no stored name starts with a dot. */
export const CLAIM_MARKER = '.svc-installation';
const DIRECTORY_MODE = 0o750;
const FILE_MODE = 0o640;

interface Marker {
  installation: string;
  /**
   * Files that were in the directory when it was adopted (an install from before the marker)
   * and that no row of this database named: they may be another database's, so they are kept.
   */
  adopted_without_row: string[];
}

/** The directory is this database's; `keep` are files never to be removed (see Marker). */
export interface DirectoryClaim {
  keep: ReadonlySet<string>;
}

/** The directory belongs to another database (or cannot be proven to be this one's). */
export class ForeignPluginDirectoryError extends Error {
  constructor(
    /** One line for the log and the start-up: names the directory. */
    message: string,
    /** One line for readiness: no path. */
    readonly reason: string,
  ) {
    super(message);
    this.name = 'ForeignPluginDirectoryError';
  }
}

/**
 * A plugin directory belongs to one database. The first use writes a marker naming this
 * database's installation id (atomically: written and fsynced under a temporary name, then
 * linked into place, which fails if another instance linked first); an instance whose
 * database has another id neither writes nor removes files there. Replicas of one database
 * share the marker, so they share the directory as before.
 */
@Injectable()
export class PluginDirectoryClaim {
  private readonly logger = new Logger('PluginFiles');
  readonly directory: string;

  constructor(
    private readonly installation: Installation,
    private readonly plugins: PluginFilesRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.directory = resolve(config.communityPluginDir);
  }

  /**
   * Checked on every write and every reconciliation (one small read), so a marker removed
   * or replaced while running is noticed. File-system faults are thrown as they come.
   */
  async claim(): Promise<DirectoryClaim> {
    const id = await this.installation.installationId();
    const marker = await this.readMarker();
    if (marker !== null) return this.check(marker, id);
    return this.adopt(id);
  }

  private check(marker: Marker | 'unreadable', id: string): DirectoryClaim {
    if (marker === 'unreadable') {
      throw new ForeignPluginDirectoryError(
        `COMMUNITY_PLUGIN_DIR ${this.directory} has a ${CLAIM_MARKER} this service cannot read: ` +
          'no plugin file is written or removed there until it is fixed or the directory changed',
        `the plugin directory's ${CLAIM_MARKER} is unreadable`,
      );
    }
    if (marker.installation !== id) {
      throw new ForeignPluginDirectoryError(
        `COMMUNITY_PLUGIN_DIR ${this.directory} belongs to another database (installation ` +
          `${marker.installation}; this database is ${id}): no plugin file is written or removed ` +
          'there; give each database its own COMMUNITY_PLUGIN_DIR',
        `the plugin directory belongs to another database (installation ${marker.installation}); ` +
          'give each database its own COMMUNITY_PLUGIN_DIR',
      );
    }
    return { keep: new Set(marker.adopted_without_row) };
  }

  /**
   * No marker: a new directory, or one from a version before markers. Plugin files already
   * there are adopted only when rows of this database name some of them; those no row names
   * are kept for good (another database may own them), never removed.
   */
  private async adopt(id: string): Promise<DirectoryClaim> {
    await this.ensureDirectory();
    const present = (await readdir(this.directory, { withFileTypes: true }))
      .filter(
        (entry) =>
          entry.isFile() && (STORED_FILE_NAME.test(entry.name) || LEGACY_TEMPORARY_NAME.test(entry.name)),
      )
      .map((entry) => entry.name);
    const named = new Set((await this.plugins.files()).map((row) => row.filePath));
    const plugins = present.filter((name) => STORED_FILE_NAME.test(name));
    if (plugins.length > 0 && !plugins.some((name) => named.has(name))) {
      throw new ForeignPluginDirectoryError(
        `COMMUNITY_PLUGIN_DIR ${this.directory} holds ${plugins.length} plugin file(s) and no row of this ` +
          'database names any of them: it is taken to be another database’s; no plugin file is written or ' +
          'removed there; give this database its own COMMUNITY_PLUGIN_DIR',
        'the plugin directory holds plugin files no row of this database names; ' +
          'give each database its own COMMUNITY_PLUGIN_DIR',
      );
    }
    const marker: Marker = {
      installation: id,
      adopted_without_row: present.filter((name) => !named.has(name)).sort(),
    };
    if (!(await this.writeMarker(marker))) {
      // Another instance linked its marker first: a replica of this database, or not.
      return this.check((await this.readMarker()) ?? 'unreadable', id);
    }
    this.logger.log(
      `Claimed ${this.directory} for this database (installation ${id})` +
        (present.length > 0
          ? `; ${marker.adopted_without_row.length} file(s) there that no row names are kept, never removed`
          : ''),
    );
    return { keep: new Set(marker.adopted_without_row) };
  }

  private async readMarker(): Promise<Marker | 'unreadable' | null> {
    let text: string;
    try {
      text = await readFile(join(this.directory, CLAIM_MARKER), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    try {
      const parsed = JSON.parse(text) as Partial<Marker>;
      if (
        typeof parsed.installation === 'string' &&
        Array.isArray(parsed.adopted_without_row) &&
        parsed.adopted_without_row.every((name) => typeof name === 'string')
      ) {
        return { installation: parsed.installation, adopted_without_row: parsed.adopted_without_row };
      }
    } catch {
      // Falls through: a marker that is not ours is never taken for ours.
    }
    return 'unreadable';
  }

  /** False when a marker is already in place (another instance's, written meanwhile). */
  private async writeMarker(marker: Marker): Promise<boolean> {
    const temporary = join(this.directory, `${CLAIM_MARKER}.${randomBytes(8).toString('hex')}.tmp`);
    const handle = await open(temporary, 'wx', FILE_MODE);
    try {
      try {
        await handle.writeFile(
          JSON.stringify({
            ...marker,
            about: 'The database this plugin directory belongs to. Do not copy.',
          }) + '\n',
        );
        await handle.sync();
      } finally {
        await handle.close();
      }
      // link, unlike rename, never replaces a marker another instance put there first.
      await link(temporary, join(this.directory, CLAIM_MARKER));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    } finally {
      await unlink(temporary).catch(() => undefined);
    }
    const directory = await open(this.directory, 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
    return true;
  }

  async ensureDirectory(): Promise<void> {
    let created: string | undefined;
    try {
      created = await mkdir(this.directory, { recursive: true, mode: DIRECTORY_MODE });
    } catch (error) {
      // mkdir says EEXIST when the path is a file.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (created !== undefined) await chmod(this.directory, DIRECTORY_MODE);
    else if (!(await stat(this.directory)).isDirectory()) {
      throw Object.assign(new Error(`${this.directory} is not a directory`), { code: 'ENOTDIR' });
    }
  }
}
