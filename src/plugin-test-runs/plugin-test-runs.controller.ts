import { Controller, Get, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AdminRoute, type AuthUser, CurrentUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { PLUGIN_NOT_FOUND } from '../community-plugins/shared/plugin-constants';
import { FILE_MISSING, MODIFIED_ON_DISK, VERSION_NOT_FOUND } from '../community-plugins/review/review-rules';
import { ApiIdParam } from '../openapi/api-docs';
import { TestRunStarted, TestRunView } from './dto/test-run.dto';
import {
  NO_TEST_RUN,
  PluginTestRunsService,
  TEST_RUN_QUEUE_FULL,
  TEST_RUNS_UNAVAILABLE,
} from './plugin-test-runs.service';

/** A reviewer's test-run of a version in the jail (docs/plugin-test-run.md). Never an uploader's. */
@ApiTags('community-plugins')
@Controller('community-plugins')
export class PluginTestRunsController {
  constructor(private readonly testRuns: PluginTestRunsService) {}

  @AdminRoute({
    summary: 'Run a version in the jail and record what it does (admins)',
    description:
      "The version's file is read through its digest check and run in the jail off the event loop, one run " +
      'per core at a time; the answer names the run, whose report `GET` reads. 503 when the jail cannot run ' +
      'here (the message says what is missing and how to enable it) or when the queue is full (`Retry-After`). ' +
      'Each run is an audit entry (`test_run`).',
    status: 202,
    data: TestRunStarted,
    fails: {
      404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND],
      409: [MODIFIED_ON_DISK],
      410: [FILE_MISSING],
      503: [`${TEST_RUNS_UNAVAILABLE}: <what is missing and how to enable it>`, TEST_RUN_QUEUE_FULL],
    },
  })
  @ApiIdParam('id')
  @Post(':id/versions/:version/test-run')
  async start(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Param('version') version: string,
  ): Promise<{ status: 'success'; data: TestRunStarted }> {
    return success(await this.testRuns.start(caller, id, version));
  }

  @AdminRoute({
    summary: 'The newest test-run of a version and its report (admins)',
    description:
      '`status` is `queued`, `running`, `done`, `timed-out` or `failed`; the report fields fill in when it ends.',
    data: TestRunView,
    fails: { 404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND, NO_TEST_RUN] },
  })
  @ApiIdParam('id')
  @Get(':id/versions/:version/test-run')
  async newest(
    @Param('id', ParseIdPipe) id: number | null,
    @Param('version') version: string,
  ): Promise<{ status: 'success'; data: TestRunView }> {
    return success(await this.testRuns.newest(id, version));
  }
}
