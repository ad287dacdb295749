import {
  All,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Options,
  Param,
  Patch,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import { ApiExcludeEndpoint, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response, FastifyRequest as Request } from 'fastify';
import { ApiError, methodNotAllowed } from '../common/api-error';
import { CurrentUser, Public } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { parseFlag, readParam } from '../common/request-params';
import {
  ApiDataEndpoint,
  ApiOptionsEndpoint,
  ApiQueryFilters,
  ApiRefusal,
  ApiRequestArguments,
} from '../openapi/api-docs';
import {
  ACTIVE_FILTER,
  NEW_SESSION,
  SESSION_DETAIL,
  SESSION_ID,
  SESSION_LIST,
  SESSION_TARGET,
} from './session-schemas';
import { SESSION_MESSAGES as M } from './session-rules';
import { SessionDetail, SessionPath, SessionsService, SessionSummary } from './sessions.service';

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

const ApiSessionId = () => ApiParam({ name: 'session_id', schema: SESSION_ID });
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

  @ApiDataEndpoint({
    summary: "The caller's sessions, by id",
    access: 'user',
    data: SESSION_LIST,
    fails: { 400: [M.incorrectParameters] },
  })
  @ApiQueryFilters({ active: ACTIVE_FILTER })
  @Get(LIST)
  list(@CurrentUser() user: AuthUser, @Req() request: Request): Data<SessionSummary[] | SessionDetail> {
    return this.read(user, {}, request);
  }

  @ApiDataEndpoint({
    summary: "One of the caller's sessions, with its targets",
    description: '`Incorrect query parameters` when `active` is given and is not a flag.',
    access: 'user',
    data: SESSION_DETAIL,
    fails: { 400: [M.invalidSessionId, M.incorrectParameters] },
  })
  @ApiSessionId()
  @Get(ONE)
  detail(
    @CurrentUser() user: AuthUser,
    @Param('session_id') sessionId: string,
    @Req() request: Request,
  ): Data<SessionSummary[] | SessionDetail> {
    return this.read(user, { sessionId }, request);
  }

  @ApiRefusal({
    summary: 'Refused: reading takes no action',
    fails: { 400: [M.incorrectParameters], 422: [M.actionMustBeNone] },
  })
  @ApiSessionId()
  @ApiAction('Any')
  @Get(WITH_ACTION)
  readOutOfShape(
    @CurrentUser() user: AuthUser,
    @Param('session_id') sessionId: string,
    @Param('action') action: string,
    @Req() request: Request,
  ): Data<SessionSummary[] | SessionDetail> {
    return this.read(user, { sessionId, action }, request);
  }

  @ApiDataEndpoint({
    summary: "Create a session; it becomes the caller's active one",
    description: `\`${M.databaseFailure}\` when the caller already has a session of that name.`,
    access: 'user',
    status: 201,
    data: null,
    fails: { 400: [M.incorrectParameters, M.databaseFailure] },
  })
  @ApiRequestArguments(NEW_SESSION)
  @Post(LIST)
  create(@CurrentUser() user: AuthUser, @Req() request: Request): Data<null> {
    return this.createAt(user, {}, request);
  }

  @ApiRefusal({
    summary: 'Refused: a session is created on `/sessions`',
    fails: { 400: [M.incorrectParameters] },
  })
  @ApiSessionId()
  @ApiAction('Any')
  @Post([ONE, WITH_ACTION])
  createOutOfShape(
    @CurrentUser() user: AuthUser,
    @Param('session_id') sessionId: string,
    @Param('action') action: string | undefined,
    @Req() request: Request,
  ): Data<null> {
    return this.createAt(user, { sessionId, action }, request);
  }

  @ApiDataEndpoint({
    summary: 'Activate a session, or add or remove one of its targets',
    description:
      "`activate` makes it the caller's only active session. `add` and `remove` need `target_id`. " +
      `\`${M.invalidParameterType}\` for an unknown session; \`${M.incorrectParameters}\` for an unknown ` +
      `action or a missing \`target_id\`; \`${M.invalidTargetReference}\` for a target that is not the caller's.`,
    access: 'user',
    data: null,
    fails: { 400: [M.invalidParameterType, M.incorrectParameters, M.invalidTargetReference] },
  })
  @ApiSessionId()
  @ApiAction('What to do', ['add', 'remove', 'activate'])
  @ApiRequestArguments(SESSION_TARGET)
  @Patch(WITH_ACTION)
  change(
    @CurrentUser() user: AuthUser,
    @Param('session_id') sessionId: string,
    @Param('action') action: string,
    @Req() request: Request,
  ): Data<null> {
    return this.changeAt(user, { sessionId, action }, request);
  }

  @ApiRefusal({
    summary: 'Refused: a change names a session and an action',
    description: `\`${M.invalidParameterType}\` when the session given is not one of the caller's.`,
    fails: { 400: [M.incorrectParameters, M.invalidParameterType] },
  })
  @ApiSessionId()
  @Patch([LIST, ONE])
  changeOutOfShape(
    @CurrentUser() user: AuthUser,
    @Param('session_id') sessionId: string | undefined,
    @Req() request: Request,
  ): Data<null> {
    return this.changeAt(user, { sessionId }, request);
  }

  @ApiDataEndpoint({
    summary: 'Delete a session and its target links',
    access: 'user',
    data: null,
    fails: { 400: [M.invalidSessionId] },
  })
  @ApiSessionId()
  @Delete(ONE)
  remove(@CurrentUser() user: AuthUser, @Param('session_id') sessionId: string): Data<null> {
    return this.removeAt(user, { sessionId });
  }

  @ApiRefusal({
    summary: 'Refused: a deletion names a session and no action',
    fails: { 400: [M.incorrectParameters] },
  })
  @ApiSessionId()
  @ApiAction('Any')
  @Delete([LIST, WITH_ACTION])
  removeOutOfShape(
    @CurrentUser() user: AuthUser,
    @Param('session_id') sessionId: string | undefined,
    @Param('action') action: string | undefined,
  ): Data<null> {
    return this.removeAt(user, { sessionId, action });
  }

  /** Public like the configuration's OPTIONS: a CORS preflight carries no token. */
  @ApiOptionsEndpoint(ALLOW)
  @ApiSessionId()
  @ApiAction('Any')
  @Options(SESSION_PATHS)
  @Public()
  @HttpCode(204)
  options(@Res({ passthrough: true }) response: Response): void {
    void response.header('Allow', ALLOW);
  }

  /** Which methods exist is no secret: told before any token check, as a router would. */
  @ApiExcludeEndpoint()
  @All(SESSION_PATHS)
  @Public()
  unsupported(): never {
    return methodNotAllowed(ALLOW);
  }

  private async read(
    user: AuthUser,
    path: SessionPath,
    request: Request,
  ): Data<SessionSummary[] | SessionDetail> {
    const active = parseFlag(readParam(request, 'active'));
    if (active === null) throw new ApiError(HttpStatus.BAD_REQUEST, M.incorrectParameters);
    return success(await this.sessions.read(user, path, active));
  }

  private async createAt(user: AuthUser, path: SessionPath, request: Request): Data<null> {
    await this.sessions.create(user, path, readParam(request, 'name'));
    return success(null);
  }

  private async changeAt(user: AuthUser, path: SessionPath, request: Request): Data<null> {
    await this.sessions.change(user, path, readParam(request, 'target_id'));
    return success(null);
  }

  private async removeAt(user: AuthUser, path: SessionPath): Data<null> {
    await this.sessions.remove(user, path);
    return success(null);
  }
}
