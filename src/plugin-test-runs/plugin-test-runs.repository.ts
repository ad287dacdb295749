import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, type FindOptionsSelect, In, LessThan, type Repository } from 'typeorm';
import type { TestRunStatus } from '../plugin-jail';
import { PluginTestRun } from './plugin-test-run.entity';
import type { ReportSummary } from './test-run-mention';

/** Every column of a run but its report (bounded, but thousands of events): what a list reads. */
const WITHOUT_REPORT: FindOptionsSelect<PluginTestRun> = {
  id: true,
  pluginId: true,
  version: true,
  sha256: true,
  status: true,
  requestedByUserId: true,
  flaggedEvents: true,
  endedByLimit: true,
  createdAt: true,
  finishedAt: true,
};

@Injectable()
export class PluginTestRunsRepository {
  constructor(@InjectRepository(PluginTestRun) private readonly runs: Repository<PluginTestRun>) {}

  insert(manager: EntityManager, run: Omit<PluginTestRun, 'id'>): Promise<PluginTestRun> {
    return manager.getRepository(PluginTestRun).save(manager.getRepository(PluginTestRun).create(run));
  }

  async setStatus(
    id: number,
    status: TestRunStatus,
    ended?: { report: string; finishedAt: Date } & ReportSummary,
  ): Promise<void> {
    await this.runs.update({ id }, { status, ...(ended ?? {}) });
  }

  /**
   * Marks failed, with `report`, every run still `queued` or `running` that was admitted before
   * `before`: runs no live server can still hold (see PluginTestRunsService.failInterrupted).
   * Returns how many.
   */
  async failAdmittedBefore(
    before: Date,
    ended: { report: string; finishedAt: Date } & ReportSummary,
  ): Promise<number> {
    const result = await this.runs.update(
      { status: In(['queued', 'running']), createdAt: LessThan(before) },
      { status: 'failed', ...ended },
    );
    return result.affected ?? 0;
  }

  /** The newest run of a version (the one a reviewer reads). */
  newest(pluginId: number, version: string): Promise<PluginTestRun | null> {
    return this.runs.findOne({ where: { pluginId, version }, order: { id: 'DESC' } });
  }

  /** One run with its report, if it is a run of this version. */
  ofVersion(pluginId: number, version: string, id: number): Promise<PluginTestRun | null> {
    return this.runs.findOneBy({ id, pluginId, version });
  }

  /**
   * A page of a version's runs, newest first, and how many it has. `report` is read only of a
   * row without its summary (see PluginTestRun.flaggedEvents); null on the others.
   */
  async page(
    pluginId: number,
    version: string,
    page: { limit: number; offset: number },
  ): Promise<{ total: number; runs: PluginTestRun[] }> {
    // Two statements: past the first page findAndCount with `select` (TypeORM 1.1.1) counts the
    // selected columns joined with `||`, which one null column (ended_by_limit) makes null: 0.
    const total = await this.runs.countBy({ pluginId, version });
    const runs = await this.runs.find({
      select: WITHOUT_REPORT,
      where: { pluginId, version },
      order: { id: 'DESC' },
      take: page.limit,
      skip: page.offset,
    });
    return { total, runs: await this.withReportsToSummarise(runs) };
  }

  /**
   * The newest run of each requester of a version, newest first (so the first is the version's
   * newest run); `report` as in `page`. idx_plugin_test_runs_requester holds the grouping's
   * columns in order.
   */
  async newestOfEachRequester(pluginId: number, version: string): Promise<PluginTestRun[]> {
    const newest = this.runs
      .createQueryBuilder('newest')
      .select('MAX(newest.id)')
      .where('newest.plugin_id = :pluginId AND newest.version = :version')
      .groupBy('newest.requested_by_user_id');
    const runs = await this.runs
      .createQueryBuilder('run')
      .select(Object.keys(WITHOUT_REPORT).map((column) => `run.${column}`))
      .where(`run.id IN (${newest.getQuery()})`, { pluginId, version })
      .orderBy('run.id', 'DESC')
      .getMany();
    return this.withReportsToSummarise(runs);
  }

  private async withReportsToSummarise(runs: PluginTestRun[]): Promise<PluginTestRun[]> {
    for (const run of runs) run.report = null;
    const unsummarised = runs.filter((run) => run.flaggedEvents === null).map((run) => run.id);
    if (unsummarised.length === 0) return runs;
    const reports = await this.runs.find({
      select: { id: true, report: true },
      where: { id: In(unsummarised) },
    });
    for (const { id, report } of reports) {
      const run = runs.find((candidate) => candidate.id === id);
      if (run) run.report = report;
    }
    return runs;
  }
}
