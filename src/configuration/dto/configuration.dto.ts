import { createParamDecorator, ExecutionContext, HttpStatus } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { FlagArg, TextArgs } from '../../common/args';
import type { ArgumentSource } from '../../common/request-params';
import { FailWith } from '../../common/validation';
import { INCORRECT_PARAMETERS, requestedChanges, RequestedChanges } from '../configuration-rules';

/** An item as the API shows it. */
@ApiSchema({ name: 'ConfigurationItem' })
export class ConfigurationItemView {
  @ApiProperty({ description: 'Changed through the API since it was seeded' })
  dirty!: boolean;

  @ApiProperty()
  key!: string;

  @ApiProperty({ description: 'May be empty' })
  descrip!: string;

  @ApiProperty()
  section!: string;

  @ApiProperty()
  value!: string;
}

/** GET filters; unknown arguments are ignored. */
@FailWith(HttpStatus.BAD_REQUEST, INCORRECT_PARAMETERS)
export class ConfigurationFilterArgs {
  @ApiPropertyOptional({ type: [String], description: 'Only these keys (repeatable)' })
  @TextArgs()
  key: string[] = [];

  @ApiPropertyOptional({ type: [String], description: 'Only these sections (repeatable)' })
  @TextArgs()
  section: string[] = [];

  @ApiPropertyOptional({
    type: Boolean,
    description: '`true`/`false` (or `1`/`0`): only changed or only unchanged items',
  })
  @FlagArg()
  dirty?: boolean;
}

/**
 * A PATCH's arguments are the configuration keys themselves, so no DTO class can name them:
 * every argument of the body, then every query argument the body lacks, with the keys whose
 * value is not text (configuration-rules.ts).
 */
export const ConfigurationChanges = createParamDecorator(
  (_: unknown, context: ExecutionContext): RequestedChanges => {
    const request = context.switchToHttp().getRequest<ArgumentSource>();
    return requestedChanges(request.body, request.query);
  },
);
