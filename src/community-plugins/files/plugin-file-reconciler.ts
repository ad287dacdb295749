import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { unlink } from 'node:fs/promises';
import { setImmediate } from 'node:timers/promises';
import { join } from 'node:path';
import { Clock } from '../../common/clock';
import { StartupWork } from '../../common/startup-work';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { LEGACY_TEMPORARY_NAME, STORED_FILE_NAME } from './plugin-file-names';
import { PluginStorage, PluginStorageError, sha256Hex } from './plugin-storage';
import { PluginVersionsRepository } from '../shared/plugin-versions.repository';
import { PluginVersionsUpgrade } from './plugin-versions-upgrade';
import { PluginsRepository } from '../shared/plugins.repository';
import { PluginFilesRepository } from './plugin-files.repository';

export interface Reconciliation {
  /** Plugin files no row names, removed. */
  removedFiles: string[];
  /** Temporary files of older versions, removed. */
  removedTemporary: string[];
  /** Rows whose file is missing (marked file_missing, never deleted). */
  missing: number[];
  /** Rows whose file is back (their mark cleared). */
  restored: number[];
  /** False when the directory is not this database's (nothing was looked at or changed). */
  claimed: boolean;
  /** Approved plugins whose file no longer has the approved digest (marked file_altered). */
  altered: number[];
  /** Approved plugins whose file has its digest again (their mark cleared). */
  unaltered: number[];
}

/**
 * Entries and rows compared between two turns of the event loop: a pass over 100,000 plugins
 * otherwise keeps requests waiting for its whole comparison.
 */
const YIELD_EVERY = 2000;

/** Lines logged per pass for single plugins; the pass's summary line counts them all. */
export const MAX_EXAMPLE_LINES = 5;

/** The marks a pass sets or clears, as its summary line words them. */
const CHANGES = {
  missing: {
    error: true,
    text: 'plugin(s) whose file is missing, marked file_missing (admins see them as broken until the file is restored or the plugin deleted)',
  },
  restored: { error: false, text: 'plugin(s) whose file is back' },
  altered: {
    error: true,
    text: 'approved plugin(s) whose file no longer has the approved digest, marked file_altered (out of the catalogue and the manifest until restored)',
  },
  unaltered: { error: false, text: 'approved plugin(s) whose file has the approved digest again' },
} as const;

const emptyReconciliation = (claimed: boolean): Reconciliation => ({
  removedFiles: [],
  removedTemporary: [],
  missing: [],
  restored: [],
  altered: [],
  unaltered: [],
  claimed,
});

/**
 * Brings the plugin directory and the plugin rows back into agreement, once the app is ready
 * (in the background, see StartupWork.afterStart) and then every
 * PLUGIN_RECONCILE_INTERVAL_SECONDS. An upload writes its file before its row commits,
 * so a crash can leave a file that no row names: it is removed once older than
 * PLUGIN_FILE_GRACE_SECONDS (another replica's upload may be between write and commit) and
 * not being written by this process. A row whose file is missing is never deleted (only an
 * admin decides that): it is logged and marked, so admins see the plugin as broken.
 * Nothing at all is done in a directory that belongs to another database (see
 * PluginDirectoryClaim), and files it kept when adopting a directory are never removed.
 * Each pass logs one summary line and at most MAX_EXAMPLE_LINES single
 * plugins, however many it marked, and puts the catalogue's kept counts and search index right
 * if a writer that bypassed them (an older replica) left them wrong.
 */
@Injectable()
export class PluginFileReconciler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('PluginFiles');
  private timer?: NodeJS.Timeout;
  private running?: Promise<Reconciliation>;
  /** The first pass, begun once the app is ready. */
  private firstPass?: Promise<unknown>;
  private stopping = false;

  constructor(
    private readonly storage: PluginStorage,
    private readonly plugins: PluginsRepository,
    private readonly pluginFiles: PluginFilesRepository,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly versions: PluginVersionsRepository,
    private readonly upgrade: PluginVersionsUpgrade,
    private readonly startupWork: StartupWork,
  ) {}

  /**
   * Readiness waits for the rows (StartupWork): the upgrade of rows older code wrote (after an
   * upgrade from an old enough release, that can be every plugin), and the catalogue's counts;
   * each step first checks cheaply whether it has anything to do. The first pass runs after, in
   * the background (0.6 s at 100,000 plugins, and seconds more for their digests), with the
   * full check of the lists the search index holds, which only the plugins an older replica
   * moved can be wrong in. What the pass finds is what any pass finds while the app serves (a
   * file removed or changed while it was down is marked a moment later; its source, read and
   * checked at each request, answers 410 or 409 meanwhile).
   */
  onApplicationBootstrap(): void {
    this.startupWork.add('plugin rows', async () => {
      await this.upgrade.run();
      await this.repairCatalogue({ ifUnindexed: true });
    });
    this.startupWork.afterStart(() => {
      this.firstPass = this.logFailure(() => this.reconcile());
      const interval = this.config.pluginReconcileIntervalSeconds * 1000;
      if (interval > 0 && !this.stopping) {
        this.timer = setInterval(() => void this.logFailure(() => this.reconcile()), interval);
        this.timer.unref();
      }
    });
  }

  /**
   * A pass under way finishes before the database closes; its digest check stops at the next
   * file (the next pass does it again).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** The first pass, begun in the background once the app is ready, has ended. */
  async settled(): Promise<void> {
    await this.firstPass;
  }

  /** One pass; a pass already running is joined rather than doubled. */
  reconcile(): Promise<Reconciliation> {
    this.running ??= (async () => {
      const result = await this.pass();
      await this.repairCatalogue();
      return result;
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** A failed pass (database down, directory unreadable) is logged and tried again at the next one. */
  private async logFailure<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      this.logger.error(
        `Could not reconcile plugin files in ${this.storage.directory}: ${(error as Error).message}`,
      );
      return undefined;
    }
  }

  private async pass(): Promise<Reconciliation> {
    const result = emptyReconciliation(false);
    let keep: ReadonlySet<string>;
    try {
      ({ keep } = await this.storage.claim());
    } catch (error) {
      // Another database's directory: logged (one line) by the storage, and left alone.
      if (error instanceof PluginStorageError && error.kind === 'foreign') return result;
      throw error;
    }
    result.claimed = true;
    // Rows first: a row that commits after this read has its file in the listing below, and is
    // looked up again before that file is removed.
    const rows = await this.pluginFiles.files();
    const versionFiles = await this.versions.files();
    const entries = await this.storage.entries();
    const named = new Set([...rows.map((row) => row.filePath), ...versionFiles.map((row) => row.filePath)]);
    const graceMs = this.config.pluginFileGraceSeconds * 1000;
    const now = Date.now();

    let looked = 0;
    for (const entry of entries) {
      if (++looked % YIELD_EVERY === 0) await setImmediate();
      if (!entry.isFile || keep.has(entry.name)) continue;
      const temporary = LEGACY_TEMPORARY_NAME.test(entry.name);
      if (!temporary && (!STORED_FILE_NAME.test(entry.name) || named.has(entry.name))) continue;
      const age = await this.storage.ageMs(entry.name, now);
      if (age === null || age < graceMs) continue;
      if (temporary) {
        if (await this.removeFile(entry.name)) result.removedTemporary.push(entry.name);
        continue;
      }
      // In flight first, then the row: an upload no longer in flight has settled its row.
      if (
        this.storage.isInFlight(entry.name) ||
        (await this.pluginFiles.hasRowForFile(entry.name)) ||
        (await this.versions.hasRowForFile(entry.name))
      )
        continue;
      if (await this.removeFile(entry.name)) result.removedFiles.push(entry.name);
    }

    const present = new Set(entries.filter((entry) => entry.isFile).map((entry) => entry.name));
    for (const row of rows) {
      if (++looked % YIELD_EVERY === 0) await setImmediate();
      const there = present.has(row.filePath) || (await this.storage.exists(row.filePath));
      if (!there && !row.fileMissing) {
        if (await this.pluginFiles.setFileMissing(row.id, this.clock.now())) {
          result.missing.push(row.id);
          this.example(
            result,
            'missing',
            `Plugin ${row.id} (${row.name}): its file ${row.filePath} is missing`,
          );
        }
      } else if (there && row.fileMissing) {
        if (await this.pluginFiles.setFileMissing(row.id, null)) {
          result.restored.push(row.id);
          this.example(result, 'restored', `Plugin ${row.id} (${row.name}): its file is back`);
        }
      }
    }

    await this.checkDigests(result);
    this.logPass(result);
    return result;
  }

  /**
   * The kept catalogue counts and the search index, checked against the rows; what was wrong is
   * put right and logged. With `ifUnindexed`, the index only when a plugin has no index rows.
   */
  private async repairCatalogue(index: { ifUnindexed?: boolean } = {}): Promise<void> {
    for (const { view, kept, counted } of await this.plugins.recountCatalogue()) {
      this.logger.warn(
        `The count of the ${view} catalogue list was ${kept ?? 'missing'}, the rows say ${counted}: corrected ` +
          '(a writer that does not keep the count, such as a replica on older code, changed the list)',
      );
    }
    const { indexed, relisted } = await this.plugins.repairSearchIndex(index);
    if (indexed > 0) this.logger.log(`Indexed ${indexed} plugin(s) for search and tags`);
    if (relisted > 0) {
      this.logger.warn(
        `${relisted} plugin(s) were in other catalogue lists than their search index said: corrected ` +
          '(a writer that does not keep the index, such as a replica on older code, moved them)',
      );
    }
  }

  /**
   * What runs must be what was approved: an approved file whose bytes no longer have the
   * approved digest is broken (out of the catalogue and the manifest, marked for admins) until
   * they have it again. A missing file is the pass above's business.
   */
  private async checkDigests(result: Reconciliation): Promise<void> {
    for (const plugin of await this.pluginFiles.approvedFiles()) {
      if (this.stopping) return;
      if (plugin.sha256 === null) continue;
      const content = await this.storage.read(plugin.filePath);
      if (content === null && !(await this.storage.exists(plugin.filePath))) continue;
      const matches = content !== null && sha256Hex(content) === plugin.sha256;
      if (!matches && !plugin.fileAltered) {
        if (await this.plugins.setFileAltered(plugin.id, this.clock.now())) {
          result.altered.push(plugin.id);
          this.example(
            result,
            'altered',
            `Plugin ${plugin.id} (${plugin.name}): its file ${plugin.filePath} no longer has the approved digest ${plugin.sha256}`,
          );
        }
      } else if (matches && plugin.fileAltered) {
        if (await this.plugins.setFileAltered(plugin.id, null)) {
          result.unaltered.push(plugin.id);
          this.example(
            result,
            'unaltered',
            `Plugin ${plugin.id} (${plugin.name}): its file has the approved digest again`,
          );
        }
      }
    }
  }

  /** The first few changes of a pass are logged as examples; the summary counts them all. */
  private example(result: Reconciliation, kind: keyof typeof CHANGES, line: string): void {
    const shown = (this.examplesShown.get(result) ?? 0) + 1;
    this.examplesShown.set(result, shown);
    if (shown > MAX_EXAMPLE_LINES) return;
    if (CHANGES[kind].error) this.logger.error(line);
    else this.logger.log(line);
  }

  private readonly examplesShown = new WeakMap<Reconciliation, number>();

  /**
   * One summary line per pass that changed anything, whatever the number of plugins: an error
   * when files are missing or altered, else a plain line. At most MAX_EXAMPLE_LINES examples
   * were logged before it.
   */
  private logPass(result: Reconciliation): void {
    const parts = (Object.keys(CHANGES) as Array<keyof typeof CHANGES>)
      .filter((kind) => result[kind].length > 0)
      .map((kind) => `${result[kind].length} ${CHANGES[kind].text}`);
    if (result.removedFiles.length + result.removedTemporary.length > 0) {
      parts.push(
        `${result.removedFiles.length} plugin file(s) without a row and ` +
          `${result.removedTemporary.length} temporary file(s) removed`,
      );
    }
    if (parts.length === 0) return;
    const shown = this.examplesShown.get(result) ?? 0;
    const more =
      shown > MAX_EXAMPLE_LINES
        ? ` (${MAX_EXAMPLE_LINES} examples above, ${shown - MAX_EXAMPLE_LINES} more not listed)`
        : '';
    const line = `Plugin files in ${this.storage.directory}: ${parts.join('; ')}${more}`;
    if (result.missing.length + result.altered.length > 0) this.logger.error(line);
    else this.logger.log(line);
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
