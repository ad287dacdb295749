import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { lstat, open, readdir, unlink } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve } from 'node:path';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { DirectoryClaim, ForeignPluginDirectoryError, PluginDirectoryClaim } from './plugin-directory-claim';

const FILE_MODE = 0o640;
const MAX_STEM_LENGTH = 64;
/** No stored plugin can be larger than the largest upload limit the config allows. */
const MAX_READ_BYTES = 16 * 1024 * 1024;
const PY = '.py';

/** Browsers send a bare name, but a client may send a path with either separator. */
const lastSegment = (clientFileName: string): string => clientFileName.split(/[\\/]/).pop() ?? '';

export const sha256Hex = (content: Buffer): string => createHash('sha256').update(content).digest('hex');

/**
 * The stored name: the client's stem reduced to safe characters plus a random suffix, so
 * the client's file name never chooses a path or collides with another upload.
 */
export function storedFileName(clientFileName: string, suffix = randomBytes(8).toString('hex')): string {
  const base = lastSegment(clientFileName);
  const stem = base
    .slice(0, base.length - (hasPythonExtension(base) ? PY.length : extname(base).length))
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/^[_-]+|[_-]+$/g, '')
    .slice(0, MAX_STEM_LENGTH);
  return `${stem || 'plugin'}_${suffix}.py`;
}

/** True when the client's file name ends in `.py` (any case); only the name is looked at here. */
export function hasPythonExtension(clientFileName: string): boolean {
  return lastSegment(clientFileName).toLowerCase().endsWith(PY);
}

export { LEGACY_TEMPORARY_NAME, STORED_FILE_NAME } from './plugin-file-names';

/** The upload's file was not stored: the disk is full, or the directory cannot be written. */
export class PluginStorageError extends Error {
  constructor(
    readonly kind: 'full' | 'unavailable' | 'foreign',
    /** Words for the client: never a path. */
    readonly reason: string,
    readonly code: string,
  ) {
    super(`plugin storage ${kind}: ${reason} (${code})`);
    this.name = 'PluginStorageError';
  }
}

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);
const UNAVAILABLE_REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOENT: 'plugin directory missing',
  ENOTDIR: 'plugin directory is not a directory',
};

/**
 * Plugin files under COMMUNITY_PLUGIN_DIR. A file is written and fsynced under its final
 * name before its row commits and removed if the commit fails, so a crash can leave a file
 * without a row (the reconciler removes it), never a row without its file.
 */
@Injectable()
export class PluginStorage {
  private readonly logger = new Logger('PluginStorage');
  readonly directory: string;
  /** Files written by this process whose row has not committed or failed yet: the reconciler leaves them be. */
  private readonly inFlight = new Set<string>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly directoryClaim: PluginDirectoryClaim,
  ) {
    this.directory = resolve(config.communityPluginDir);
  }

  /**
   * The directory is this database's (see PluginDirectoryClaim); a directory that is
   * another database's, or cannot be written, is a PluginStorageError.
   */
  async claim(): Promise<DirectoryClaim> {
    try {
      return await this.directoryClaim.claim();
    } catch (error) {
      throw this.storageFailure(error);
    }
  }

  /**
   * Writes the file durably under a new random name, then runs `commit` with that name (the
   * row's transaction). When `commit` fails the file is removed, unless `keepFile(error)`
   * says the row may have committed all the same (a connection lost with the answer).
   */
  async storeThen<T>(
    clientFileName: string,
    content: Buffer,
    commit: (fileName: string) => Promise<T>,
    keepFile: (error: unknown) => boolean,
  ): Promise<T> {
    const fileName = storedFileName(clientFileName);
    this.inFlight.add(fileName);
    try {
      await this.writeDurably(fileName, content);
      try {
        return await commit(fileName);
      } catch (error) {
        if (!keepFile(error)) await this.remove(fileName);
        throw error;
      }
    } finally {
      this.inFlight.delete(fileName);
    }
  }

  /** True while this process is between writing the file and settling its row. */
  isInFlight(fileName: string): boolean {
    return this.inFlight.has(fileName);
  }

  private async writeDurably(fileName: string, content: Buffer): Promise<void> {
    const path = join(this.directory, fileName);
    let created = false;
    await this.claim();
    try {
      const handle = await open(path, 'wx', FILE_MODE);
      created = true;
      try {
        await handle.writeFile(content);
        // The umask may have taken bits away from the mode given at creation.
        await handle.chmod(FILE_MODE);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.syncDirectory();
    } catch (error) {
      if (created) await unlink(path).catch(() => undefined);
      throw this.storageFailure(error);
    }
  }

  /** The directory entry of a new file is durable only once the directory itself is synced. */
  private async syncDirectory(): Promise<void> {
    const handle = await open(this.directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** A full disk or an unusable directory becomes a PluginStorageError; the log names the directory. */
  private storageFailure(error: unknown): unknown {
    if (error instanceof ForeignPluginDirectoryError) {
      this.logger.error(error.message);
      return new PluginStorageError(
        'foreign',
        'the plugin directory belongs to another database',
        'EFOREIGN',
      );
    }
    const code = (error as NodeJS.ErrnoException).code ?? '';
    const reason = FULL_CODES.has(code) ? 'no space left' : UNAVAILABLE_REASONS[code];
    if (reason === undefined) return error;
    this.logger.error(`Could not store a plugin file in ${this.directory}: ${code} (${reason})`);
    return new PluginStorageError(FULL_CODES.has(code) ? 'full' : 'unavailable', reason, code);
  }

  /** The plugin directory's entries; none when it does not exist. */
  async entries(): Promise<Array<{ name: string; isFile: boolean }>> {
    try {
      const entries = await readdir(this.directory, { withFileTypes: true });
      return entries.map((entry) => ({ name: entry.name, isFile: entry.isFile() }));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  /** Milliseconds since the entry was last written, or null when it is gone. */
  async ageMs(fileName: string, now: number): Promise<number | null> {
    try {
      return now - (await lstat(this.pathOf(fileName))).mtimeMs;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** True when the row's file is there as a regular file. */
  async exists(filePath: string): Promise<boolean> {
    let path: string;
    try {
      path = this.pathOf(filePath);
    } catch {
      return false;
    }
    try {
      return (await lstat(path)).isFile();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }

  /** Removes a stored plugin file; one that is already gone is logged, not an error. */
  async remove(filePath: string): Promise<void> {
    let path: string;
    try {
      await this.claim();
      path = this.pathOf(filePath);
      await unlink(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') this.logger.warn(`Plugin file ${filePath} was already missing`);
      else if (!(error instanceof PluginStorageError))
        this.logger.error(`Could not remove plugin file ${filePath}: ${(error as Error).message}`);
    }
  }

  /** The stored file's content, or null when it is missing, not a regular file, or implausibly large. */
  async read(filePath: string): Promise<Buffer | null> {
    let path: string;
    try {
      path = this.pathOf(filePath);
    } catch (error) {
      this.logger.error((error as Error).message);
      return null;
    }
    try {
      const handle = await open(path, 'r');
      try {
        const info = await handle.stat();
        if (!info.isFile() || info.size > MAX_READ_BYTES) return null;
        return await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** A stored path stays inside the plugin directory whatever the row says. */
  private pathOf(filePath: string): string {
    const path = resolve(this.directory, filePath);
    const inside = relative(this.directory, path);
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      throw new Error(`Plugin file path ${filePath} points outside ${this.directory}`);
    }
    return path;
  }
}
