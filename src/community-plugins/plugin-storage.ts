import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

const DIRECTORY_MODE = 0o750;
const FILE_MODE = 0o640;
const MAX_STEM_LENGTH = 64;
/** No stored plugin can be larger than the largest upload limit the config allows. */
const MAX_READ_BYTES = 16 * 1024 * 1024;
const PY = '.py';

/** Browsers send a bare name, but a client may send a path with either separator. */
const lastSegment = (clientFileName: string): string => clientFileName.split(/[\\/]/).pop() ?? '';

/** A plugin file written under its temporary name, waiting for its row to commit. */
export interface StagedFile {
  /** The name the file gets once its row has committed, relative to the plugin directory. */
  readonly fileName: string;
  readonly tempPath: string;
}

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

/** Plugin files under COMMUNITY_PLUGIN_DIR: written under a temporary name, renamed once committed. */
@Injectable()
export class PluginStorage {
  private readonly logger = new Logger('PluginStorage');
  private readonly directory: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.directory = resolve(config.communityPluginDir);
  }

  async stage(clientFileName: string, content: Buffer): Promise<StagedFile> {
    await this.ensureDirectory();
    const fileName = storedFileName(clientFileName);
    const tempPath = join(this.directory, `.upload-${randomBytes(12).toString('hex')}.tmp`);
    await writeFile(tempPath, content, { mode: FILE_MODE, flag: 'wx' });
    // The umask may have taken bits away from the mode given at creation.
    await chmod(tempPath, FILE_MODE);
    return { fileName, tempPath };
  }

  async commit(staged: StagedFile): Promise<void> {
    await rename(staged.tempPath, this.pathOf(staged.fileName));
  }

  async discard(staged: StagedFile): Promise<void> {
    await unlink(staged.tempPath).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') this.logger.error(`Could not remove ${staged.tempPath}: ${error.message}`);
    });
  }

  /** Removes a stored plugin file; one that is already gone is logged, not an error. */
  async remove(filePath: string): Promise<void> {
    let path: string;
    try {
      path = this.pathOf(filePath);
      await unlink(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') this.logger.warn(`Plugin file ${filePath} was already missing`);
      else this.logger.error(`Could not remove plugin file ${filePath}: ${(error as Error).message}`);
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

  private async ensureDirectory(): Promise<void> {
    const created = await mkdir(this.directory, { recursive: true, mode: DIRECTORY_MODE });
    if (created !== undefined) await chmod(this.directory, DIRECTORY_MODE);
    else if (!(await stat(this.directory)).isDirectory())
      throw new Error(`${this.directory} is not a directory`);
  }
}
