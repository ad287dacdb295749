import { Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AdminRoute, type AuthUser, CurrentUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiPageQuery } from '../community-plugins/catalogue/catalogue.routes';
import { type PageQuery, ParsePageQueryPipe } from '../community-plugins/catalogue/list-query';
import { PLUGIN_NOT_FOUND } from '../community-plugins/shared/plugin-constants';
import {
  FILE_MISSING,
  MODIFIED_ON_DISK,
  SELF_REVIEW,
  VERSION_NOT_FOUND,
} from '../community-plugins/review/review-rules';
import { ApiIdParam } from '../openapi/api-docs';
import { TestRunPage, TestRunStarted, TestRunView } from './dto/test-run.dto';
import {
  NO_TEST_RUN,
  PluginTestRunsService,
  TEST_RUN_NOT_FOUND,
  TEST_RUN_QUEUE_FULL,
  TEST_RUNS_UNAVAILABLE,
} from './plugin-test-runs.service';

/** Who may read a version's runs, said once for the three reads. */
const READ_RULE =
  "An admin whose address reaches the mailbox of the plugin's or the version's uploader (`Alice+x@` is `alice@`) " +
  'gets 403, after the 404s of the plugin and the version, as for approve (unless PLUGIN_SELF_REVIEW=allowed).';

/** A reviewer's test-run of a version in the jail (docs/plugin-test-run.md). Never an uploader's. */
@ApiTags('community-plugins')
@Controller('community-plugins')
export class PluginTestRunsController {
  constructor(private readonly testRuns: PluginTestRunsService) {}

  @AdminRoute({
    summary: 'Run a version in the jail and record what it does (admins)',
    description:
      "The version's file is read through its digest check and run in the jail off the event loop, one run " +
      'per core at a time; the answer names the run, whose report `GET` reads. Checks in this order: the plugin ' +
      'and the version (404), the jail can run here (503; the message says what is missing and how to enable ' +
      "it), the file's digest (409, 410), the caller's address does not reach the mailbox of the plugin's or the " +
      "version's uploader (403; `Alice+x@` is `alice@`; unless PLUGIN_SELF_REVIEW=allowed), a place in the queue " +
      '(503 with `Retry-After`). The last two are asked in the transaction that records the run, as for approve. ' +
      'Each run is an audit entry (`test_run`).',
    status: 202,
    data: TestRunStarted,
    fails: {
      404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND],
      403: [SELF_REVIEW],
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
      '`status` is `queued`, `running`, `done`, `timed-out` or `failed`; the report fields fill in when it ends. ' +
      READ_RULE,
    data: TestRunView,
    fails: { 404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND, NO_TEST_RUN], 403: [SELF_REVIEW] },
  })
  @ApiIdParam('id')
  @Get(':id/versions/:version/test-run')
  async newest(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Param('version') version: string,
  ): Promise<{ status: 'success'; data: TestRunView }> {
    return success(await this.testRuns.newest(caller, id, version));
  }

  @AdminRoute({
    summary: "A version's test-runs, newest first, with who asked for each (admins)",
    description:
      "Each run's summary (status, flagged events, the limit that ended it), not its report: " +
      '`test-runs/<run id>` reads that. A page in the shape of the other lists (`total`, `limit`, `offset`); 400 ' +
      'with `errors` naming a malformed `limit` or `offset`. ' +
      READ_RULE,
    data: TestRunPage,
    fails: {
      400: ['Invalid query parameters'],
      404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND],
      403: [SELF_REVIEW],
    },
  })
  @ApiIdParam('id')
  @ApiPageQuery()
  @Get(':id/versions/:version/test-runs')
  async list(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Param('version') version: string,
    @Query(ParsePageQueryPipe) page: PageQuery,
  ): Promise<{ status: 'success'; data: TestRunPage }> {
    return success(await this.testRuns.list(caller, id, version, page));
  }

  @AdminRoute({
    summary: 'One test-run of a version and its report (admins)',
    description:
      'The same shape as the newest run (`test-run/`). A run id of another version, or of none, is not found ' +
      'here; it is checked after the plugin, the version and who may read. ' +
      READ_RULE,
    data: TestRunView,
    fails: { 404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND, TEST_RUN_NOT_FOUND], 403: [SELF_REVIEW] },
  })
  @ApiIdParam('id')
  @ApiIdParam('run_id')
  @Get(':id/versions/:version/test-runs/:run_id')
  async one(
    @CurrentUser() caller: AuthUser,
    @Param('id', ParseIdPipe) id: number | null,
    @Param('version') version: string,
    @Param('run_id', ParseIdPipe) runId: number | null,
  ): Promise<{ status: 'success'; data: TestRunView }> {
    return success(await this.testRuns.one(caller, id, version, runId));
  }
}
