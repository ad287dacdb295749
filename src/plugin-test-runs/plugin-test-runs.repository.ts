import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, LessThan, type Repository } from 'typeorm';
import type { TestRunStatus } from '../plugin-jail';
import { PluginTestRun } from './plugin-test-run.entity';
import type { ReportSummary } from './test-run-mention';

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
}
