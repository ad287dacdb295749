import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { TextArg } from '../../common/args';

/** The enrolment's argument: the account's current password, so that a stolen session alone cannot enrol. */
export class EnrolmentArgs {
  @ApiPropertyOptional({ description: 'The password the account has now' })
  @TextArg()
  current_password?: string;
}

export class SecondFactorCodeArgs {
  @ApiPropertyOptional({
    description: 'The 6-digit code of the authenticator app; to turn it off, a recovery code also does',
  })
  @TextArg()
  otp?: string;
}

/** The answer to an enrolment: the only place the secret ever appears. */
@ApiSchema({ name: 'TotpEnrolment' })
export class EnrolmentView {
  @ApiProperty({ description: 'Base32 (RFC 4648) secret, 160 bits; shown only here' })
  secret!: string;

  @ApiProperty({
    description: '`otpauth://totp/...` with the secret, SHA-1, 6 digits, 30 s: for a QR code',
  })
  otpauth_uri!: string;
}

/** The answer to a confirmation: ten recovery codes, shown this once. */
@ApiSchema({ name: 'RecoveryCodes' })
export class RecoveryCodesView {
  @ApiProperty({
    type: [String],
    description:
      'Ten one-time codes (`abcd-efgh-ijkl-mnop`, 80 random bits each); only their hashes are kept',
  })
  recovery_codes!: string[];
}
