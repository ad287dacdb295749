import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { LEGACY_TEMPORARY_NAME, PluginStorage, STORED_FILE_NAME } from './plugin-storage';
import { PluginsRepository } from './plugins.repository';

export interface Reconciliation {
  /** Plugin files no row names, removed. */
  removedFiles: string[];
  /** Temporary files of older versions, removed. */
  removedTemporary: string[];
  /** Rows whose file is missing (marked file_missing, never deleted). */
  missing: number[];
  /** Rows whose file is back (their mark cleared). */
  restored: number[];
}

/**
 * Brings the plugin directory and the plugin rows back into agreement, at start-up and then
 * every PLUGIN_RECONCILE_INTERVAL_SECONDS. An upload writes its file before its row commits,
 * so a crash can leave a file that no row names: it is removed once older than
 * PLUGIN_FILE_GRACE_SECONDS (another replica's upload may be between write and commit) and
 * not being written by this process. A row whose file is missing is never deleted (only an
 * admin decides that): it is logged and marked, so admins see the plugin as broken.
 */
@Injectable()
export class PluginFileReconciler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('PluginFiles');
  private timer?: NodeJS.Timeout;
  private running?: Promise<Reconciliation>;

  constructor(
    private readonly storage: PluginStorage,
    private readonly plugins: PluginsRepository,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.reconcileLogged();
    const interval = this.config.pluginReconcileIntervalSeconds * 1000;
    if (interval > 0) {
      this.timer = setInterval(() => void this.reconcileLogged(), interval);
      this.timer.unref();
    }
  }

  /** A pass under way finishes before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One pass; a pass already running is joined rather than doubled. */
  reconcile(): Promise<Reconciliation> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  /** A failed pass (database down, directory unreadable) is logged and tried again at the next one. */
  private async reconcileLogged(): Promise<void> {
    try {
      await this.reconcile();
    } catch (error) {
      this.logger.error(
        `Could not reconcile plugin files in ${this.storage.directory}: ${(error as Error).message}`,
      );
    }
  }

  private async pass(): Promise<Reconciliation> {
    const result: Reconciliation = { removedFiles: [], removedTemporary: [], missing: [], restored: [] };
    // Rows first: a row that commits after this read has its file in the listing below, and is
    // looked up again before that file is removed.
    const rows = await this.plugins.files();
    const entries = await this.storage.entries();
    const named = new Set(rows.map((row) => row.filePath));
    const graceMs = this.config.pluginFileGraceSeconds * 1000;
    const now = Date.now();

    for (const entry of entries) {
      if (!entry.isFile) continue;
      const temporary = LEGACY_TEMPORARY_NAME.test(entry.name);
      if (!temporary && (!STORED_FILE_NAME.test(entry.name) || named.has(entry.name))) continue;
      const age = await this.storage.ageMs(entry.name, now);
      if (age === null || age < graceMs) continue;
      if (temporary) {
        if (await this.removeFile(entry.name)) result.removedTemporary.push(entry.name);
        continue;
      }
      // In flight first, then the row: an upload no longer in flight has settled its row.
      if (this.storage.isInFlight(entry.name) || (await this.plugins.hasRowForFile(entry.name))) continue;
      if (await this.removeFile(entry.name)) result.removedFiles.push(entry.name);
    }

    const present = new Set(entries.filter((entry) => entry.isFile).map((entry) => entry.name));
    for (const row of rows) {
      const there = present.has(row.filePath) || (await this.storage.exists(row.filePath));
      if (!there && row.fileMissingAt === null) {
        if (await this.plugins.setFileMissing(row.id, this.clock.now())) {
          result.missing.push(row.id);
          this.logger.error(
            `Plugin ${row.id} (${row.name}): its file ${row.filePath} is missing from ${this.storage.directory}; ` +
              'admins see it as broken (file_missing) until the file is restored or the plugin deleted',
          );
        }
      } else if (there && row.fileMissingAt !== null) {
        if (await this.plugins.setFileMissing(row.id, null)) {
          result.restored.push(row.id);
          this.logger.log(`Plugin ${row.id} (${row.name}): its file is back`);
        }
      }
    }

    if (result.removedFiles.length + result.removedTemporary.length > 0) {
      this.logger.log(
        `Removed ${result.removedFiles.length} plugin file(s) without a row and ` +
          `${result.removedTemporary.length} temporary file(s) from ${this.storage.directory}`,
      );
    }
    return result;
  }

  private async removeFile(name: string): Promise<boolean> {
    try {
      await unlink(join(this.storage.directory, name));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.logger.error(
          `Could not remove ${name} from ${this.storage.directory}: ${(error as Error).message}`,
        );
      }
      return false;
    }
  }
}
