import { ApiPropertyOptional } from '@nestjs/swagger';
import { TextArg } from '../../common/args';

/*
 * Arguments of the account endpoints. Every one is an optional string: the spec's own
 * messages, in its own order (`Missing username value` before `Choose a valid email`, ...),
 * are decided by the services, so these DTOs refuse nothing.
 */

export class RegisterArgs {
  @ApiPropertyOptional({ description: 'User name' })
  @TextArg()
  username?: string;

  @ApiPropertyOptional({ description: 'Email address' })
  @TextArg()
  email?: string;

  @ApiPropertyOptional({ description: 'Strong password' })
  @TextArg()
  password?: string;

  @ApiPropertyOptional({ description: 'Same password again' })
  @TextArg()
  confirm_password?: string;
}

export class EmailArgs {
  @ApiPropertyOptional({ description: 'Email address of the account' })
  @TextArg()
  email?: string;
}

export class IdentifierArgs {
  @ApiPropertyOptional({ description: 'Email or user name' })
  @TextArg()
  emailOrUsername?: string;
}

export class OtpArgs extends IdentifierArgs {
  @ApiPropertyOptional({ description: 'The mailed 6-digit code' })
  @TextArg()
  otp?: string;
}

export class NewPasswordArgs extends OtpArgs {
  @ApiPropertyOptional({ description: 'New strong password' })
  @TextArg()
  password?: string;
}

export class LoginArgs extends IdentifierArgs {
  @ApiPropertyOptional({ description: 'Password' })
  @TextArg()
  password?: string;

  @ApiPropertyOptional({
    description:
      'Only for an account with a second factor on: the 6-digit code of its authenticator app, or a recovery code',
  })
  @TextArg()
  otp?: string;
}
