import { ApiProperty, ApiPropertyOptional, ApiSchema, PickType } from '@nestjs/swagger';
import { RegisterArgs } from '../../account/dto/account-args';
import { TextArg } from '../../common/args';

/** A login as its owner sees it: never its token or the token's hash. */
@ApiSchema({ name: 'Login' })
export class LoginView {
  @ApiProperty({ description: 'Names the login in `DELETE /api/v1/account/logins/<id>`' })
  id!: number;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Within a minute; null for a login made before the column existed and not used since',
  })
  last_used_at!: string | null;

  @ApiProperty({ format: 'date-time' })
  expires_at!: string;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The client’s address at login, as the trusted proxies (`TRUSTED_PROXIES`) tell it',
  })
  client_address!: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The User-Agent at login, at most 255 characters',
  })
  user_agent!: string | null;

  @ApiProperty({ description: 'The login this request came with' })
  current!: boolean;
}

/** What logout-everywhere ended. */
@ApiSchema({ name: 'LoginsEnded' })
export class LoginsEndedView {
  @ApiProperty({ description: 'How many other logins it ended' })
  ended!: number;
}

/** The new password with the register form's own arguments and rules; the current one proves the caller. */
export class PasswordChangeArgs extends PickType(RegisterArgs, ['password', 'confirm_password'] as const) {
  @ApiPropertyOptional({ description: 'The password the account has now' })
  @TextArg()
  current_password?: string;
}
