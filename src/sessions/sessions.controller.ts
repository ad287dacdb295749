import { Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import { methodNotAllowed } from '../common/api-error';
import { Args } from '../common/args';
import { Authenticated, CurrentUser, OptionsRoute, UnsupportedMethods } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiIdParam } from '../openapi/api-docs';
import {
  NewSessionArgs,
  SessionDetail,
  SessionFilterArgs,
  SessionSummary,
  SessionTargetArgs,
} from './dto/session.dto';
import { SESSION_MESSAGES as M } from './session-rules';
import { SessionPath, SessionsService } from './sessions.service';

/**
 * The spec's path shape `/sessions/[<session_id>[/<action>]]` as one route per shape, so that
 * each method on each shape is documented as what it is; with the router's non-strict matching
 * each also takes a trailing slash. Every method is served on every shape: the `...OutOfShape`
 * handlers pass their path to the same service call, which refuses it with the spec's error
 * (POST with a session id: 400 `Incorrect query parameters`, GET with an action: 422, ...).
 */
const LIST = 'sessions';
const ONE = 'sessions/:session_id';
const WITH_ACTION = 'sessions/:session_id/:action';
const SESSION_PATHS = [LIST, ONE, WITH_ACTION];
const ALLOW = 'GET, POST, PATCH, DELETE, OPTIONS';

const ApiSessionId = () => ApiIdParam('session_id');
const ApiAction = (description: string, values?: string[]) =>
  ApiParam({
    name: 'action',
    description,
    schema: values ? { type: 'string', enum: values } : { type: 'string' },
  });

type Data<T> = Promise<{ status: 'success'; data: T }>;

@ApiTags('sessions')
@Controller()
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Authenticated({
    summary: "The caller's sessions, by id",
    data: [SessionSummary],
    fails: { 400: [M.incorrectParameters] },
    query: SessionFilterArgs,
  })
  @Get(LIST)
  list(
    @CurrentUser() user: AuthUser,
    @Args() args: SessionFilterArgs,
  ): Data<SessionSummary[] | SessionDetail> {
    return this.read(user, {}, args);
  }

  @Authenticated({
    summary: "One of the caller's sessions, with its targets",
    description: '`Incorrect query parameters` when `active` is given and is not a flag.',
    data: SessionDetail,
    fails: { 400: [M.invalidSessionId, M.incorrectParameters] },
  })
  @ApiSessionId()
  @Get(ONE)
  detail(
    @CurrentUser() user: AuthUser,
    @Param('session_id', ParseIdPipe) sessionId: number | null,
    @Args() args: SessionFilterArgs,
  ): Data<SessionSummary[] | SessionDetail> {
    return this.read(user, { sessionId }, args);
  }

  @Authenticated({
    summary: 'Refused: reading takes no action',
    fails: { 400: [M.incorrectParameters], 422: [M.actionMustBeNone] },
  })
  @ApiSessionId()
  @ApiAction('Any')
  @Get(WITH_ACTION)
  readOutOfShape(
    @CurrentUser() user: AuthUser,
    @Param('session_id', ParseIdPipe) sessionId: number | null,
    @Param('action') action: string,
    @Args() args: SessionFilterArgs,
  ): Data<SessionSummary[] | SessionDetail> {
    return this.read(user, { sessionId, action }, args);
  }

  @Authenticated({
    summary: "Create a session; it becomes the caller's active one",
    description: `\`${M.databaseFailure}\` when the caller already has a session of that name.`,
    status: 201,
    data: null,
    fails: {
      400: [M.incorrectParameters, M.databaseFailure],
      409: ['Session limit reached: at most <MAX_SESSIONS_PER_USER> sessions per user; delete one first'],
    },
    args: NewSessionArgs,
  })
  @Post(LIST)
  create(@CurrentUser() user: AuthUser, @Args() args: NewSessionArgs): Data<null> {
    return this.createAt(user, {}, args);
  }

  @Authenticated({
    summary: 'Refused: a session is created on `/sessions`',
    fails: { 400: [M.incorrectParameters] },
  })
  @ApiSessionId()
  @ApiAction('Any')
  @Post([ONE, WITH_ACTION])
  createOutOfShape(
    @CurrentUser() user: AuthUser,
    @Param('session_id', ParseIdPipe) sessionId: number | null,
    @Param('action') action: string | undefined,
    @Args() args: NewSessionArgs,
  ): Data<null> {
    return this.createAt(user, { sessionId, action }, args);
  }

  @Authenticated({
    summary: 'Activate a session, or add or remove one of its targets',
    description:
      "`activate` makes it the caller's only active session. `add` and `remove` need `target_id`. " +
      `\`${M.invalidParameterType}\` for an unknown session; \`${M.incorrectParameters}\` for an unknown ` +
      `action or a missing \`target_id\`; \`${M.invalidTargetReference}\` for a target that is not the caller's.`,
    data: null,
    fails: { 400: [M.invalidParameterType, M.incorrectParameters, M.invalidTargetReference] },
    args: SessionTargetArgs,
  })
  @ApiSessionId()
  @ApiAction('What to do', ['add', 'remove', 'activate'])
  @Patch(WITH_ACTION)
  change(
    @CurrentUser() user: AuthUser,
    @Param('session_id', ParseIdPipe) sessionId: number | null,
    @Param('action') action: string,
    @Args() args: SessionTargetArgs,
  ): Data<null> {
    return this.changeAt(user, { sessionId, action }, args);
  }

  @Authenticated({
    summary: 'Refused: a change names a session and an action',
    description: `\`${M.invalidParameterType}\` when the session given is not one of the caller's.`,
    fails: { 400: [M.incorrectParameters, M.invalidParameterType] },
  })
  @ApiSessionId()
  @Patch([LIST, ONE])
  changeOutOfShape(
    @CurrentUser() user: AuthUser,
    @Param('session_id', ParseIdPipe) sessionId: number | null | undefined,
    @Args() args: SessionTargetArgs,
  ): Data<null> {
    return this.changeAt(user, { sessionId }, args);
  }

  @Authenticated({
    summary: 'Delete a session and its target links',
    data: null,
    fails: { 400: [M.invalidSessionId] },
  })
  @ApiSessionId()
  @Delete(ONE)
  remove(
    @CurrentUser() user: AuthUser,
    @Param('session_id', ParseIdPipe) sessionId: number | null,
  ): Data<null> {
    return this.removeAt(user, { sessionId });
  }

  @Authenticated({
    summary: 'Refused: a deletion names a session and no action',
    fails: { 400: [M.incorrectParameters] },
  })
  @ApiSessionId()
  @ApiAction('Any')
  @Delete([LIST, WITH_ACTION])
  removeOutOfShape(
    @CurrentUser() user: AuthUser,
    @Param('session_id', ParseIdPipe) sessionId: number | null | undefined,
    @Param('action') action: string | undefined,
  ): Data<null> {
    return this.removeAt(user, { sessionId, action });
  }

  @ApiSessionId()
  @ApiAction('Any')
  @OptionsRoute(SESSION_PATHS, ALLOW)
  options(): void {}

  @UnsupportedMethods(SESSION_PATHS)
  unsupported(): never {
    throw methodNotAllowed(ALLOW);
  }

  private async read(
    user: AuthUser,
    path: SessionPath,
    args: SessionFilterArgs,
  ): Data<SessionSummary[] | SessionDetail> {
    return success(await this.sessions.read(user, path, args.active));
  }

  private async createAt(user: AuthUser, path: SessionPath, args: NewSessionArgs): Data<null> {
    await this.sessions.create(user, path, args.name);
    return success(null);
  }

  private async changeAt(user: AuthUser, path: SessionPath, args: SessionTargetArgs): Data<null> {
    await this.sessions.change(user, path, args.target_id);
    return success(null);
  }

  private async removeAt(user: AuthUser, path: SessionPath): Data<null> {
    await this.sessions.remove(user, path);
    return success(null);
  }
}
