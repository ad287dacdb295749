import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { StartupWork } from '../../common/startup-work';
import {
  isNoVerdict,
  keptWarnings,
  RULES_VERSION,
  ValidatorBusyError,
  ValidatorPool,
} from '../../plugin-validator';
import { PluginVersionsRepository } from '../shared/plugin-versions.repository';
import { PluginStorage, sha256Hex } from '../files/plugin-storage';
import { PluginRechecksRepository } from './plugin-rechecks.repository';

/** At most this many plugins are validated in one pass; the next pass goes on after them. */
export const MAX_RECHECKS_PER_PASS = 200;
/** The pause between two passes when more approved plugins wait. */
const PAUSE_BETWEEN_PASSES_MS = 60_000;
/** The owner the re-check's validations queue under, beside the uploaders (user ids). */
const RECHECK_QUEUE_OWNER = 'recheck';

export interface RecheckPass {
  checked: number;
  flagged: number;
  /** True when plugins may remain past this pass's cap. */
  more: boolean;
}

/**
 * Issue 18: when a new version of the validator rules starts, every approved plugin is judged
 * again. After start-up (never delaying it or readiness: StartupWork.afterStart) each approved file without a verdict
 * of the current rules is validated through the server's pool, one at a time, and its verdict
 * stored; a plugin that now fails stays approved and is flagged to admins (admin view and
 * queue). A missing or altered file is the reconciler's business and is skipped here. An
 * analyser failure stores nothing, so the plugin is tried again at the next start.
 */
@Injectable()
export class PluginRecheckService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('PluginRecheck');
  private running?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopping = false;

  constructor(
    private readonly rechecks: PluginRechecksRepository,
    private readonly storage: PluginStorage,
    private readonly pool: ValidatorPool,
    private readonly clock: Clock,
    private readonly startupWork: StartupWork,
    private readonly versions: PluginVersionsRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.startupWork.afterStart(() => {
      if (!this.stopping) this.schedule(0);
    });
  }

  /** A validation under way finishes before the pool and the database close. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Resolves when the passes started so far are done (for tests and shutdown). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private schedule(afterId: number): void {
    this.running = this.passLogged(afterId).finally(() => (this.running = undefined));
  }

  private async passLogged(afterId: number): Promise<void> {
    try {
      const { checked, flagged, more, lastId } = await this.pass(afterId);
      if (checked > 0) {
        this.logger.log(
          `Re-checked ${checked} approved plugin(s) against validator rules v${RULES_VERSION}: ${flagged} flagged`,
        );
      }
      if (more && !this.stopping) {
        this.timer = setTimeout(() => this.schedule(lastId), PAUSE_BETWEEN_PASSES_MS);
        this.timer.unref();
      }
    } catch (error) {
      this.logger.error(`Could not re-check approved plugins: ${(error as Error).message}`);
    }
  }

  /** One pass over at most MAX_RECHECKS_PER_PASS approved plugins after `afterId`. */
  async pass(afterId = 0): Promise<RecheckPass & { lastId: number }> {
    const candidates = await this.rechecks.unchecked(RULES_VERSION, afterId, MAX_RECHECKS_PER_PASS);
    let checked = 0;
    let flagged = 0;
    let lastId = afterId;
    let more = candidates.length === MAX_RECHECKS_PER_PASS;
    for (const plugin of candidates) {
      if (this.stopping) break;
      const content = await this.storage.read(plugin.filePath);
      // Missing or altered: the reconciler marks it; no verdict on bytes nobody approved.
      if (content === null || sha256Hex(content) !== plugin.sha256) {
        lastId = plugin.id;
        continue;
      }
      let findings;
      let warnings;
      try {
        const result = await this.pool.validate(content, RECHECK_QUEUE_OWNER);
        findings = result.violations;
        warnings = keptWarnings(result.warnings);
      } catch (error) {
        // Uploads fill the pool's queue: this plugin and the rest wait for the next pass.
        if (!(error instanceof ValidatorBusyError)) throw error;
        more = true;
        break;
      }
      lastId = plugin.id;
      // An analyser failure or a refusal for time is no verdict: tried again at the next start.
      if (findings.some((finding) => isNoVerdict(finding.rule))) continue;
      await this.rechecks.store(
        { pluginId: plugin.id, rulesVersion: RULES_VERSION, sha256: plugin.sha256, findings },
        this.clock.now(),
      );
      // The served version's warnings as these rules give them (none when it is flagged: a
      // refusal carries its findings only, shown as the re-check's).
      await this.versions.setWarnings(plugin.id, plugin.sha256, warnings);
      checked += 1;
      if (findings.length > 0) flagged += 1;
    }
    return { checked, flagged, more, lastId };
  }
}
