import { All, Controller, Get, Header, HttpCode, HttpStatus, Options, Patch, Req } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest as Request } from 'fastify';
import { ApiError, methodNotAllowed } from '../common/api-error';
import { AdminOnly, Public } from '../common/decorators';
import { success } from '../common/envelopes';
import { parseFlag, readParam, readParamValues } from '../common/request-params';
import {
  ApiDataEndpoint,
  ApiOptionsEndpoint,
  ApiQueryFilters,
  ApiRequestArguments,
} from '../openapi/api-docs';
import {
  CONFIGURATION_BY_SECTION,
  CONFIGURATION_CHANGES,
  CONFIGURATION_FILTERS,
} from './configuration-schemas';
import { ConfigurationFilter, ConfigurationItemView, requestedChanges } from './configuration-rules';
import { ConfigurationService, INCORRECT_PARAMETERS } from './configuration.service';

const ALLOW = 'GET, PATCH, OPTIONS';

/** `configuration` also answers `configuration/`: the router is not strict about the trailing slash. */
@ApiTags('configuration')
@Controller('configuration')
export class ConfigurationController {
  constructor(private readonly configuration: ConfigurationService) {}

  /** Any valid token may read; unknown filter arguments are ignored. */
  @ApiDataEndpoint({
    summary: 'Configuration items grouped by section',
    description: 'Filters combine; unknown arguments are ignored.',
    access: 'user',
    data: CONFIGURATION_BY_SECTION,
    fails: { 400: [INCORRECT_PARAMETERS] },
  })
  @ApiQueryFilters(CONFIGURATION_FILTERS)
  @Get()
  async list(
    @Req() request: Request,
  ): Promise<{ status: 'success'; data: Record<string, ConfigurationItemView[]> }> {
    const dirty = parseFlag(readParam(request, 'dirty'));
    if (dirty === null) {
      throw new ApiError(HttpStatus.BAD_REQUEST, INCORRECT_PARAMETERS, { dirty: 'must be true or false' });
    }
    const filter: ConfigurationFilter = {
      keys: readParamValues(request, 'key'),
      sections: readParamValues(request, 'section'),
      dirty,
    };
    return success(await this.configuration.list(filter));
  }

  /** Tool paths decide which programs the framework runs, so changing them is an admin's act. */
  @ApiDataEndpoint({
    summary: 'Set configuration values (admins)',
    description:
      'The changed items are marked dirty. 400 when no argument is given, or a value is not text, longer ' +
      'than allowed or holds control characters (`errors` names each key).',
    access: 'admin',
    data: null,
    fails: { 400: [INCORRECT_PARAMETERS], 422: ['Invalid configuration item specified'] },
  })
  @ApiRequestArguments(CONFIGURATION_CHANGES)
  @Patch()
  @AdminOnly()
  async update(@Req() request: Request): Promise<{ status: 'success'; data: null }> {
    await this.configuration.update(requestedChanges(request.body, request.query));
    return success(null);
  }

  /** A CORS preflight carries no token, so the answer to OPTIONS is public. */
  @ApiOptionsEndpoint(ALLOW)
  @Options()
  @Public()
  @HttpCode(204)
  @Header('Allow', ALLOW)
  options(): void {}

  /** Which methods exist is no secret: told before any token check, as a router would. */
  @ApiExcludeEndpoint()
  @All()
  @Public()
  unsupported(): never {
    return methodNotAllowed(ALLOW);
  }
}
