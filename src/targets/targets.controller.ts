import {
  All,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Options,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError, methodNotAllowed } from '../common/api-error';
import { CurrentUser, Public } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { MAX_ID, parseFlag, parseId, readParam } from '../common/request-params';
import { parseTargetUrl } from './target-url';
import { TargetView } from './target.entity';
import { TargetPage, TargetsService } from './targets.service';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;
const INCORRECT_PARAMETERS = 'Incorrect query parameters';

/** A user's own targets; every route needs a token, and other users' targets do not exist here. */
@Controller()
export class TargetsController {
  constructor(private readonly targets: TargetsService) {}

  @Get('targets')
  async list(
    @CurrentUser() user: AuthUser,
    @Req() request: Request,
  ): Promise<{ status: 'success'; data: TargetPage }> {
    const errors: Record<string, string> = {};
    const limit = integerArgument(readParam(request, 'limit'), DEFAULT_LIMIT, 1, MAX_LIMIT);
    if (limit === null) errors.limit = `must be an integer from 1 to ${MAX_LIMIT}`;
    const offset = integerArgument(readParam(request, 'offset'), 0, 0, MAX_ID);
    if (offset === null) errors.offset = 'must be an integer of at least 0';
    if (limit === null || offset === null) {
      throw new ApiError(HttpStatus.BAD_REQUEST, INCORRECT_PARAMETERS, errors);
    }
    const page = await this.targets.list(user.id, {
      targetUrl: present(readParam(request, 'target_url')),
      hostName: present(readParam(request, 'host_name')),
      search: present(readParam(request, 'search')),
      limit,
      offset,
    });
    return success(page);
  }

  @Post('targets')
  async create(
    @CurrentUser() user: AuthUser,
    @Req() request: Request,
  ): Promise<{ status: 'success'; data: TargetView }> {
    const parsed = parseTargetUrl(readParam(request, 'target_url'));
    if (!parsed) throw new ApiError(HttpStatus.BAD_REQUEST, 'Invalid target URL');
    const scope = parseFlag(readParam(request, 'scope'));
    if (scope === null) {
      throw new ApiError(HttpStatus.BAD_REQUEST, INCORRECT_PARAMETERS, { scope: 'must be true or false' });
    }
    return success(await this.targets.create(user.id, parsed, scope ?? true));
  }

  @Get('targets/:targetId')
  async get(
    @CurrentUser() user: AuthUser,
    @Param('targetId') targetId: string,
  ): Promise<{ status: 'success'; data: TargetView }> {
    return success(await this.targets.get(user.id, parseId(targetId)));
  }

  @Delete('targets/:targetId')
  async remove(
    @CurrentUser() user: AuthUser,
    @Param('targetId') targetId: string,
  ): Promise<{ status: 'success'; data: null }> {
    await this.targets.remove(user.id, parseId(targetId));
    return success(null);
  }

  /** Public like the configuration's OPTIONS: a CORS preflight carries no token. */
  @Options('targets{/:targetId}')
  @Public()
  @HttpCode(204)
  options(
    @Param('targetId') targetId: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): void {
    response.setHeader('Allow', allowed(targetId));
  }

  /** Which methods exist is no secret: told before any token check, as a router would. */
  @All('targets{/:targetId}')
  @Public()
  unsupported(
    @Param('targetId') targetId: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): never {
    return methodNotAllowed(response, allowed(targetId));
  }
}

function allowed(targetId: string | undefined): string {
  return targetId === undefined ? 'GET, POST, OPTIONS' : 'GET, DELETE, OPTIONS';
}

/** Absent and empty filters are no filter. */
function present(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function integerArgument(raw: string | undefined, fallback: number, min: number, max: number): number | null {
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]{1,10}$/.test(raw)) return null;
  const value = Number(raw);
  return value >= min && value <= max ? value : null;
}
