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
import { ApiExcludeEndpoint, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply as Response, FastifyRequest as Request } from 'fastify';
import { ApiError, methodNotAllowed } from '../common/api-error';
import { CurrentUser, Public } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { MAX_ID, parseFlag, parseId, readParam } from '../common/request-params';
import {
  ApiDataEndpoint,
  ApiOptionsEndpoint,
  ApiQueryFilters,
  ApiRequestArguments,
} from '../openapi/api-docs';
import { NEW_TARGET, TARGET, TARGET_ID, TARGET_PAGE } from './target-schemas';
import { parseTargetUrl } from './target-url';
import { TargetView } from './target.entity';
import { TARGET_NOT_FOUND, TargetPage, TargetsService } from './targets.service';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;
const INCORRECT_PARAMETERS = 'Incorrect query parameters';

const ApiTargetId = () => ApiParam({ name: 'targetId', schema: TARGET_ID });

/** A user's own targets; every route needs a token, and other users' targets do not exist here. */
@ApiTags('targets')
@Controller()
export class TargetsController {
  constructor(private readonly targets: TargetsService) {}

  @ApiDataEndpoint({
    summary: "The caller's targets, by id, a page at a time",
    description: '400 with `errors` naming `limit` or `offset` when one is out of range.',
    access: 'user',
    data: TARGET_PAGE,
    fails: { 400: [INCORRECT_PARAMETERS] },
  })
  @ApiQueryFilters({
    target_url: { type: 'string', description: 'This URL (compared in normal form)' },
    host_name: { type: 'string', description: 'This host' },
    search: { type: 'string', description: 'Part of the URL' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    offset: { type: 'integer', minimum: 0, default: 0 },
  })
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

  @ApiDataEndpoint({
    summary: 'Add a target',
    description:
      '400 `Incorrect query parameters` when `scope` is not a flag; 409 when the caller has this URL.',
    access: 'user',
    status: 201,
    data: TARGET,
    fails: { 400: ['Invalid target URL', INCORRECT_PARAMETERS], 409: ['Target already exists'] },
  })
  @ApiRequestArguments(NEW_TARGET)
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

  @ApiDataEndpoint({
    summary: "One of the caller's targets",
    access: 'user',
    data: TARGET,
    fails: { 404: [TARGET_NOT_FOUND] },
  })
  @ApiTargetId()
  @Get('targets/:targetId')
  async get(
    @CurrentUser() user: AuthUser,
    @Param('targetId') targetId: string,
  ): Promise<{ status: 'success'; data: TargetView }> {
    return success(await this.targets.get(user.id, parseId(targetId)));
  }

  @ApiDataEndpoint({
    summary: "Delete one of the caller's targets",
    description: 'It leaves every session that held it.',
    access: 'user',
    data: null,
    fails: { 404: [TARGET_NOT_FOUND] },
  })
  @ApiTargetId()
  @Delete('targets/:targetId')
  async remove(
    @CurrentUser() user: AuthUser,
    @Param('targetId') targetId: string,
  ): Promise<{ status: 'success'; data: null }> {
    await this.targets.remove(user.id, parseId(targetId));
    return success(null);
  }

  /** Public like the configuration's OPTIONS: a CORS preflight carries no token. */
  @ApiOptionsEndpoint('`GET, POST, OPTIONS` for the list, `GET, DELETE, OPTIONS` for one target')
  @ApiTargetId()
  @Options(['targets', 'targets/:targetId'])
  @Public()
  @HttpCode(204)
  options(
    @Param('targetId') targetId: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): void {
    void response.header('Allow', allowed(targetId));
  }

  /** Which methods exist is no secret: told before any token check, as a router would. */
  @ApiExcludeEndpoint()
  @All('targets{/:targetId}')
  @Public()
  unsupported(@Param('targetId') targetId: string | undefined): never {
    return methodNotAllowed(allowed(targetId));
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
