import { All, Controller, Get, Header, HttpCode, HttpStatus, Options, Patch, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError, methodNotAllowed } from '../common/api-error';
import { AdminOnly, Public } from '../common/decorators';
import { success } from '../common/envelopes';
import { parseFlag, readParam, readParamValues } from '../common/request-params';
import { ConfigurationFilter, ConfigurationItemView, requestedChanges } from './configuration-rules';
import { ConfigurationService, INCORRECT_PARAMETERS } from './configuration.service';

const ALLOW = 'GET, PATCH, OPTIONS';

/** `configuration` also answers `configuration/`: the router is not strict about the trailing slash. */
@Controller('configuration')
export class ConfigurationController {
  constructor(private readonly configuration: ConfigurationService) {}

  /** Any valid token may read; unknown filter arguments are ignored. */
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
  @Patch()
  @AdminOnly()
  async update(@Req() request: Request): Promise<{ status: 'success'; data: null }> {
    await this.configuration.update(requestedChanges(request.body, request.query));
    return success(null);
  }

  /** A CORS preflight carries no token, so the answer to OPTIONS is public. */
  @Options()
  @Public()
  @HttpCode(204)
  @Header('Allow', ALLOW)
  options(): void {}

  /** Which methods exist is no secret: told before any token check, as a router would. */
  @All()
  @Public()
  unsupported(@Res({ passthrough: true }) response: Response): never {
    return methodNotAllowed(response, ALLOW);
  }
}
