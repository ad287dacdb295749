import { Injectable } from '@nestjs/common';
import { UsersRepository } from '../users/users.repository';
import type { TestRunSummary } from './dto/test-run.dto';
import type { PluginTestRun } from './plugin-test-run.entity';
import { PluginTestRunsRepository } from './plugin-test-runs.repository';
import { testRunSummary } from './test-run-mention';

/** A version's runs as lists show them: each with its requester's username and its report's summary. */
@Injectable()
export class TestRunSummaries {
  constructor(
    private readonly runs: PluginTestRunsRepository,
    private readonly users: UsersRepository,
  ) {}

  /** A page of the version's runs, newest first. */
  async page(
    pluginId: number,
    version: string,
    page: { limit: number; offset: number },
  ): Promise<{ total: number; runs: TestRunSummary[] }> {
    const { total, runs } = await this.runs.page(pluginId, version, page);
    return { total, runs: await this.named(runs) };
  }

  /** The newest run of each reviewer of the version, newest first: one reviewer's run never hides another's. */
  async newestOfEachReviewer(pluginId: number, version: string): Promise<TestRunSummary[]> {
    return this.named(await this.runs.newestOfEachRequester(pluginId, version));
  }

  private async named(runs: PluginTestRun[]): Promise<TestRunSummary[]> {
    const names = await this.users.namesOf(runs.map((run) => run.requestedByUserId));
    return runs.map((run) => {
      const name = names.get(run.requestedByUserId);
      // A run's requester is a foreign key, and accounts are deactivated, never deleted.
      if (name === undefined)
        throw new Error(`test-run ${run.id}: its requester ${run.requestedByUserId} is gone`);
      return testRunSummary(run, name);
    });
  }
}
