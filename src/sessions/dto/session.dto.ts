import { HttpStatus } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FlagArg, TextArg } from '../../common/args';
import { FailWith } from '../../common/validation';
import { SESSION_MESSAGES, SESSION_NAME_MAX } from '../session-rules';

export class SessionSummary {
  @ApiProperty()
  id!: number;

  @ApiProperty()
  name!: string;

  @ApiProperty({ description: "The caller's active session; at most one is" })
  active!: boolean;
}

export class SessionDetail extends SessionSummary {
  @ApiProperty({ type: [Number], description: 'Ids of its targets, ascending' })
  targets!: number[];
}

/** GET's filter; the spec's 400 names no argument. */
@FailWith(HttpStatus.BAD_REQUEST, SESSION_MESSAGES.incorrectParameters, { errors: false })
export class SessionFilterArgs {
  @ApiPropertyOptional({
    type: Boolean,
    description: '`true`/`false` (or `1`/`0`): only the active session, or only the others',
  })
  @FlagArg()
  active?: boolean;
}

/** The name is checked by the service, in the spec's order of checks (path shape first). */
export class NewSessionArgs {
  @ApiProperty({
    minLength: 1,
    maxLength: SESSION_NAME_MAX,
    description: "Trimmed; no control characters; unique among the caller's sessions",
  })
  @TextArg()
  name?: string;
}

/** `target_id` is read by the service with the same id rule as paths, after the session and action. */
export class SessionTargetArgs {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    description: "One of the caller's targets; needed by `add` and `remove`",
  })
  @TextArg()
  target_id?: string;
}
