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
import type { Request, Response } from 'express';
import { ApiError, methodNotAllowed } from '../common/api-error';
import { CurrentUser, Public } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { parseFlag, readParam } from '../common/request-params';
import { SESSION_MESSAGES } from './session-rules';
import { SessionDetail, SessionsService, SessionSummary } from './sessions.service';

/**
 * The spec's path shape `/sessions/[<session_id>[/<action>]]` as one pattern; with the
 * router's non-strict matching it also takes the trailing slash of `/sessions/`.
 */
export const SESSION_PATH = 'sessions{/:sessionId}{/:action}';
const ALLOW = 'GET, POST, PATCH, DELETE, OPTIONS';

@Controller()
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Get(SESSION_PATH)
  async read(
    @CurrentUser() user: AuthUser,
    @Param('sessionId') sessionId: string | undefined,
    @Param('action') action: string | undefined,
    @Req() request: Request,
  ): Promise<{ status: 'success'; data: SessionSummary[] | SessionDetail }> {
    const active = parseFlag(readParam(request, 'active'));
    if (active === null) throw new ApiError(HttpStatus.BAD_REQUEST, SESSION_MESSAGES.incorrectParameters);
    return success(await this.sessions.read(user, { sessionId, action }, active));
  }

  @Post(SESSION_PATH)
  async create(
    @CurrentUser() user: AuthUser,
    @Param('sessionId') sessionId: string | undefined,
    @Param('action') action: string | undefined,
    @Req() request: Request,
  ): Promise<{ status: 'success'; data: null }> {
    await this.sessions.create(user, { sessionId, action }, readParam(request, 'name'));
    return success(null);
  }

  @Patch(SESSION_PATH)
  async change(
    @CurrentUser() user: AuthUser,
    @Param('sessionId') sessionId: string | undefined,
    @Param('action') action: string | undefined,
    @Req() request: Request,
  ): Promise<{ status: 'success'; data: null }> {
    await this.sessions.change(user, { sessionId, action }, readParam(request, 'target_id'));
    return success(null);
  }

  @Delete(SESSION_PATH)
  async remove(
    @CurrentUser() user: AuthUser,
    @Param('sessionId') sessionId: string | undefined,
    @Param('action') action: string | undefined,
  ): Promise<{ status: 'success'; data: null }> {
    await this.sessions.remove(user, { sessionId, action });
    return success(null);
  }

  /** Public like the configuration's OPTIONS: a CORS preflight carries no token. */
  @Options(SESSION_PATH)
  @Public()
  @HttpCode(204)
  options(@Res({ passthrough: true }) response: Response): void {
    response.setHeader('Allow', ALLOW);
  }

  /** Which methods exist is no secret: told before any token check, as a router would. */
  @All(SESSION_PATH)
  @Public()
  unsupported(@Res({ passthrough: true }) response: Response): never {
    return methodNotAllowed(response, ALLOW);
  }
}
