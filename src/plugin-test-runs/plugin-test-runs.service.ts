import {
  type BeforeApplicationShutdown,
  HttpStatus,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AuditLog } from '../audit/audit-log.service';
import type { AuthUser } from '../common/decorators';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { StartupWork } from '../common/startup-work';
import { findPluginOr404, pluginNotFound } from '../community-plugins/shared/plugin-lookup';
import { PluginReviewService } from '../community-plugins/review/plugin-review.service';
import { VERSION_NOT_FOUND } from '../community-plugins/review/review-rules';
import { sha256Hex } from '../community-plugins/files/plugin-storage';
import { PluginVersionsRepository } from '../community-plugins/shared/plugin-versions.repository';
import { PluginsRepository } from '../community-plugins/shared/plugins.repository';
import { Transactions } from '../database/transactions';
import { type PausableRun, runPlugin } from '../plugin-jail';
import type { TestRunPage, TestRunStarted, TestRunView } from './dto/test-run.dto';
import { JailAvailability } from './jail-availability';
import { PluginTestRun } from './plugin-test-run.entity';
import { PluginTestRunsRepository } from './plugin-test-runs.repository';
import { parseReport, summarise } from './test-run-mention';
import { TestRunPacer } from './test-run-pacer';
import { TestRunQueue } from './test-run-queue';
import { TestRunSummaries } from './test-run-summaries';
import { availableParallelism } from 'node:os';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Inject } from '@nestjs/common';

export const TEST_RUNS_UNAVAILABLE = 'Test-runs are unavailable';
export const TEST_RUN_QUEUE_FULL = 'Test-run queue is full';
export const NO_TEST_RUN = 'This version has no test-run';
export const TEST_RUN_NOT_FOUND = 'Test-run not found';
/** A run takes seconds: a refused one is worth asking again after about one. */
const RETRY_AFTER_SECONDS = '10';
/** The reason a run left `queued` or `running` by a server that stopped is marked failed with. */
export const INTERRUPTED = 'interrupted: the server stopped before the run ended';
/** Beyond the longest a run can live on a live server: the database, the spawn and the report's write. */
const INTERRUPTED_MARGIN_MS = 60_000;
/** How often every server looks for runs a stopped one left behind, after its start-up look. */
const INTERRUPTED_SWEEP_MS = 60_000;

/**
 * The reviewers' test-runs: a version's bytes, through their digest check, run in the jail off
 * the event loop (a child process), one per core. Every run keeps its report. The plugin's
 * uploader starts none and reads none (unless PLUGIN_SELF_REVIEW=allowed), as for approve.
 */
@Injectable()
export class PluginTestRunsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly queue: TestRunQueue;
  /** At the idle priority, runs give way to a busy event loop (test-run-pacer.ts). */
  private readonly pacer: TestRunPacer | null;
  private readonly logger = new Logger('PluginTestRun');
  /** The longest a run lives on a live server, from its admission (its row's created_at) to its end. */
  private readonly lifetimeMs: number;
  private sweep?: NodeJS.Timeout;

  constructor(
    private readonly plugins: PluginsRepository,
    private readonly versions: PluginVersionsRepository,
    private readonly review: PluginReviewService,
    private readonly runs: PluginTestRunsRepository,
    private readonly summaries: TestRunSummaries,
    private readonly jail: JailAvailability,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly startupWork: StartupWork,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const { queueLength, wallSeconds, cpuPriority } = config.pluginTestRun;
    this.queue = new TestRunQueue(availableParallelism(), queueLength);
    this.pacer = cpuPriority === 'idle' ? new TestRunPacer() : null;
    // A run waits behind at most queueLength others, each ended by its wall limit (twice it,
    // paused: WallClock) on at least one core, then runs until its own: every server of one
    // install shares these settings, so a younger run may be another live server's.
    this.lifetimeMs = (queueLength + 1) * 2 * wallSeconds * 1000 + INTERRUPTED_MARGIN_MS;
  }

  /**
   * A run lives in its server's memory: a crash or a stop leaves its row `queued` or `running`.
   * At start-up (before readiness), and every minute after on each server, a run admitted longer
   * ago than any live server can hold one is marked failed with INTERRUPTED. A younger one is
   * left alone, whoever's it is: it may be running on another replica sharing the database.
   */
  onApplicationBootstrap(): void {
    this.startupWork.add('interrupted test-runs', async () => {
      await this.failInterrupted();
    });
    this.startupWork.afterStart(() => {
      this.sweep = setInterval(() => {
        this.failInterrupted().catch((error: unknown) =>
          this.logger.error(
            `Marking interrupted test-runs failed: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
      }, INTERRUPTED_SWEEP_MS);
      this.sweep.unref();
    });
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.sweep);
  }

  /** Marks failed the runs no live server can still hold; returns how many. */
  async failInterrupted(): Promise<number> {
    const now = this.clock.now();
    // The shape of a report (toView reads it), with no measure: nothing of the run was kept.
    const report = {
      limit: null,
      duration_ms: null,
      peak_memory_bytes: null,
      stdout: '',
      stderr: '',
      exception: INTERRUPTED,
      return_value: null,
      events: [],
      events_dropped: 0,
      observed_events: [],
      observed_events_dropped: 0,
    };
    const count = await this.runs.failAdmittedBefore(new Date(now.getTime() - this.lifetimeMs), {
      report: JSON.stringify(report),
      finishedAt: now,
      ...summarise(report),
    });
    if (count > 0) this.logger.warn(`${count} interrupted test-run(s) marked failed`);
    return count;
  }

  /**
   * Checks in this order: the plugin and the version (404), the jail (503), the version's file
   * through its digest check (409, 410), the caller is not the plugin's or the version's uploader
   * (403, as for approve), a place in the queue (503). The last two are asked in the transaction
   * that records the run, under the plugin's row lock, as a decision's are: a refused run leaves
   * no row and takes no place.
   */
  async start(admin: AuthUser, id: number | null, versionText: string): Promise<TestRunStarted> {
    const { plugin, version } = await this.versionOr404(id, versionText);
    const problem = await this.jail.problem();
    if (problem !== null)
      throw new ApiError(HttpStatus.SERVICE_UNAVAILABLE, `${TEST_RUNS_UNAVAILABLE}: ${problem}`);
    const content = await this.review.verifiedContent(
      plugin,
      version.filePath,
      version.sha256,
      HttpStatus.GONE,
    );
    // Admitted at most once however often the transaction runs again (Transactions.run).
    let admitted = false;
    let run: PluginTestRun;
    try {
      run = await this.transactions.run(async (manager) => {
        const current = await this.plugins.lockAndRead(manager, plugin.id);
        if (!current) throw pluginNotFound();
        await this.review.refuseSelfReview(manager, admin, current, version);
        if (!admitted) {
          if (!this.queue.admit()) {
            throw new ApiError(HttpStatus.SERVICE_UNAVAILABLE, TEST_RUN_QUEUE_FULL, undefined, {
              'Retry-After': RETRY_AFTER_SECONDS,
            });
          }
          admitted = true;
        }
        const row = await this.runs.insert(manager, {
          pluginId: current.id,
          version: version.version,
          sha256: sha256Hex(content),
          status: 'queued',
          requestedByUserId: admin.id,
          report: null,
          flaggedEvents: 0,
          endedByLimit: null,
          createdAt: this.clock.now(),
          finishedAt: null,
        });
        await this.audit.append(manager, {
          actor: 'user',
          actorUserId: admin.id,
          action: 'test_run',
          subject: `plugin:${current.id}`,
          details: { version: version.version, sha256: row.sha256, run_id: row.id },
        });
        return row;
      });
    } catch (error) {
      if (admitted) this.queue.release();
      throw error;
    }
    void this.queue.run(() => this.execute(run.id, content));
    return { id: run.id, status: 'queued' };
  }

  /** The version's newest run, with its report. */
  async newest(reader: AuthUser, id: number | null, versionText: string): Promise<TestRunView> {
    const { plugin, version } = await this.readableVersion(reader, id, versionText);
    const run = await this.runs.newest(plugin.id, version.version);
    if (!run) throw new ApiError(HttpStatus.NOT_FOUND, NO_TEST_RUN);
    return toView(run);
  }

  /** A page of the version's runs, newest first, each with its requester and its report's summary. */
  async list(
    reader: AuthUser,
    id: number | null,
    versionText: string,
    page: { limit: number; offset: number },
  ): Promise<TestRunPage> {
    const { plugin, version } = await this.readableVersion(reader, id, versionText);
    const { total, runs } = await this.summaries.page(plugin.id, version.version, page);
    return { total, limit: page.limit, offset: page.offset, runs };
  }

  /** One run of the version, with its report; a run of another version is not found here. */
  async one(
    reader: AuthUser,
    id: number | null,
    versionText: string,
    runId: number | null,
  ): Promise<TestRunView> {
    const { plugin, version } = await this.readableVersion(reader, id, versionText);
    const run = runId === null ? null : await this.runs.ofVersion(plugin.id, version.version, runId);
    if (!run) throw new ApiError(HttpStatus.NOT_FOUND, TEST_RUN_NOT_FOUND);
    return toView(run);
  }

  /**
   * A version whose runs `reader` may read: 404 for the plugin, then the version, then 403 for
   * its uploader (as approve's order has it; unless PLUGIN_SELF_REVIEW=allowed).
   */
  private async readableVersion(reader: AuthUser, id: number | null, versionText: string) {
    const found = await this.versionOr404(id, versionText);
    await this.review.refuseSelfReview(this.transactions.manager, reader, found.plugin, found.version);
    return found;
  }

  private async versionOr404(id: number | null, versionText: string) {
    const plugin = await findPluginOr404(this.plugins, id);
    const version = await this.versions.find(plugin.id, versionText);
    if (!version) throw new ApiError(HttpStatus.NOT_FOUND, VERSION_NOT_FOUND);
    return { plugin, version };
  }

  /** Never rejects: whatever happens ends as the run's status. */
  private async execute(runId: number, content: Buffer): Promise<void> {
    let paced: PausableRun | null = null;
    try {
      await this.runs.setStatus(runId, 'running');
      const report = await runPlugin(content, this.jail.settings, {
        onRunning: (run) => {
          paced = run;
          this.pacer?.add(run);
        },
      }).finally(() => {
        if (paced !== null) this.pacer?.remove(paced);
      });
      const { status, ...rest } = report;
      await this.runs.setStatus(runId, status, {
        report: JSON.stringify(rest),
        finishedAt: this.clock.now(),
        ...summarise(rest),
      });
    } catch (error) {
      this.logger.error(
        `Test-run ${runId} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      await this.runs
        .setStatus(runId, 'failed', {
          report: JSON.stringify(null),
          finishedAt: this.clock.now(),
          ...summarise(null),
        })
        .catch(() => undefined);
    }
  }
}

function toView(run: PluginTestRun): TestRunView {
  const report = parseReport(run.report);
  return {
    id: run.id,
    plugin_id: run.pluginId,
    version: run.version,
    sha256: run.sha256,
    status: run.status,
    requested_by_user_id: run.requestedByUserId,
    created_at: run.createdAt.toISOString(),
    finished_at: run.finishedAt?.toISOString() ?? null,
    limit: report?.limit ?? null,
    duration_ms: report?.duration_ms ?? null,
    peak_memory_bytes: report?.peak_memory_bytes ?? null,
    stdout: report?.stdout ?? null,
    stderr: report?.stderr ?? null,
    exception: report?.exception ?? null,
    return_value: report?.return_value ?? null,
    events: report?.events ?? [],
    events_dropped: report?.events_dropped ?? 0,
    observed_events: report?.observed_events ?? [],
    observed_events_dropped: report?.observed_events_dropped ?? 0,
  };
}
