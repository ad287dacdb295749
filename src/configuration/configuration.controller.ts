import { Controller, Get, Patch } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiTags } from '@nestjs/swagger';
import { methodNotAllowed } from '../common/api-error';
import { Args } from '../common/args';
import {
  AdminRoute,
  Authenticated,
  CurrentUser,
  OptionsRoute,
  UnsupportedMethods,
} from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { mapOfLists } from '../openapi/api-docs';
import { INCORRECT_PARAMETERS, type RequestedChanges } from './configuration-rules';
import { VALUE_MAX } from './configuration-defaults';
import { ConfigurationService } from './configuration.service';
import {
  ConfigurationChanges,
  ConfigurationFilterArgs,
  ConfigurationItemView,
} from './dto/configuration.dto';

const ALLOW = 'GET, PATCH, OPTIONS';

/** `configuration` also answers `configuration/`: the router is not strict about the trailing slash. */
@ApiTags('configuration')
@Controller('configuration')
export class ConfigurationController {
  constructor(private readonly configuration: ConfigurationService) {}

  /** Any valid token may read; unknown filter arguments are ignored. */
  @Authenticated({
    summary: 'Configuration items grouped by section',
    description: 'Filters combine; unknown arguments are ignored.',
    data: mapOfLists(
      ConfigurationItemView,
      'Section name to its items; sections and keys in code-point order',
    ),
    fails: { 400: [INCORRECT_PARAMETERS] },
    query: ConfigurationFilterArgs,
  })
  @Get()
  async list(
    @Args() args: ConfigurationFilterArgs,
  ): Promise<{ status: 'success'; data: Record<string, ConfigurationItemView[]> }> {
    return success(
      await this.configuration.list({ keys: args.key, sections: args.section, dirty: args.dirty }),
    );
  }

  /** Tool paths decide which programs the framework runs, so changing them is an admin's act. */
  @AdminRoute({
    summary: 'Set configuration values (admins)',
    description:
      'One argument per configuration key, its value the new value (the first one when a key is repeated); ' +
      'every key must exist, and all changes are applied or none. The changed items are marked dirty. ' +
      '400 when no argument is given, or a value is not text, longer than allowed or holds control ' +
      'characters (`errors` names each key).',
    data: null,
    fails: { 400: [INCORRECT_PARAMETERS], 422: ['Invalid configuration item specified'] },
  })
  // The argument names are the configuration keys, so only a map describes them.
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json', 'multipart/form-data')
  @ApiBody({
    description: 'Also accepted as query-string arguments.',
    required: false,
    schema: {
      type: 'object',
      additionalProperties: { type: 'string', maxLength: VALUE_MAX },
      example: { sqlmap_path: '/usr/bin/sqlmap' },
    },
  })
  @Patch()
  async update(
    @CurrentUser() caller: AuthUser,
    @ConfigurationChanges() changes: RequestedChanges,
  ): Promise<{ status: 'success'; data: null }> {
    await this.configuration.update(changes, caller.id);
    return success(null);
  }

  @OptionsRoute('', ALLOW)
  options(): void {}

  @UnsupportedMethods('')
  unsupported(): never {
    throw methodNotAllowed(ALLOW);
  }
}
