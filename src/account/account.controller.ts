import { Controller, Get, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Args } from '../common/args';
import { AccountEndpoint } from '../common/decorators';
import { AccountResponse } from '../common/envelopes';
import { AccountRateLimit } from '../rate-limit/account-rate-limit';
import { AccountService } from './account.service';
import { EmailArgs, IdentifierArgs, NewPasswordArgs, OtpArgs, RegisterArgs } from './dto/account-args';

/** Wrong OTPs are failed guesses for the account limits. */
const OTP_FAILURES = ['Invalid OTP'];

@ApiTags('accounts')
@Controller()
export class AccountController {
  constructor(private readonly account: AccountService) {}

  @AccountEndpoint({
    summary: 'Register a user (inactive until the email is confirmed)',
    args: RegisterArgs,
    messages: [
      'User created successfully',
      'Missing username value',
      'Missing email value',
      'Missing password value',
      'Missing confirm password value',
      "Password doesn't match",
      'Choose a valid email',
      'Choose a strong password',
      'Choose a valid username',
      'Username already exists',
      'Email already exists',
    ],
    rateLimited: true,
  })
  @Post('register')
  @AccountRateLimit({ route: 'register', identifier: 'email' })
  register(@Args() args: RegisterArgs): Promise<AccountResponse> {
    return this.account.register({
      username: args.username,
      email: args.email,
      password: args.password,
      confirmPassword: args.confirm_password,
    });
  }

  @AccountEndpoint({
    summary: 'Mail an account activation link (valid 1 hour)',
    args: EmailArgs,
    messages: ['Email send successful', 'Missing email value'],
    rateLimited: true,
  })
  @Post('generate/confirm_email')
  @AccountRateLimit({ route: 'confirm_email', identifier: 'email' })
  generateConfirmation(@Args() args: EmailArgs): Promise<AccountResponse> {
    return this.account.generateConfirmation(args.email);
  }

  @AccountEndpoint({
    summary: 'Activate the account of an emailed link key',
    messages: ['Email Verified', 'Link Expired', 'Invalid Link'],
  })
  @Get('verify/confirm_email/:keyValue')
  verifyConfirmation(@Param('keyValue') keyValue: string): Promise<AccountResponse> {
    return this.account.verifyConfirmation(keyValue);
  }

  @AccountEndpoint({
    summary:
      "Secure the address of an emailed link key: activate the account without the registration's password (the owner sets one through the OTP mail)",
    messages: ['Email Verified', 'Link Expired', 'Invalid Link'],
  })
  @Post('verify/claim_email/:keyValue')
  verifyClaim(@Param('keyValue') keyValue: string): Promise<AccountResponse> {
    return this.account.verifyClaim(keyValue);
  }

  @AccountEndpoint({
    summary: 'Mail a one-time password for a password change (valid 5 minutes)',
    args: IdentifierArgs,
    messages: ['Otp Send Successful', "Username / Email doesn't exist"],
    rateLimited: true,
  })
  @Post('generate/otp')
  @AccountRateLimit({ route: 'otp', identifier: 'emailOrUsername', perIdentifier: true })
  generateOtp(@Args() args: IdentifierArgs): Promise<AccountResponse> {
    return this.account.generateOtp(args.emailOrUsername);
  }

  @AccountEndpoint({
    summary: 'Check a one-time password',
    args: OtpArgs,
    messages: ['OTP Verified', 'Invalid OTP', "Username / Email doesn't exist"],
    rateLimited: true,
  })
  @Post('verify/otp')
  @AccountRateLimit({ route: 'verify_otp', identifier: 'emailOrUsername', failures: OTP_FAILURES })
  verifyOtp(@Args() args: OtpArgs): Promise<AccountResponse> {
    return this.account.verifyOtp(args.emailOrUsername, args.otp);
  }

  @AccountEndpoint({
    summary: 'Set a new password with a valid one-time password',
    args: NewPasswordArgs,
    messages: [
      'Password Change Successful',
      'Choose a strong password',
      'Invalid OTP',
      'Password Change Unsuccessful',
    ],
    rateLimited: true,
  })
  @Post('new-password')
  @AccountRateLimit({ route: 'new_password', identifier: 'emailOrUsername', failures: OTP_FAILURES })
  newPassword(@Args() args: NewPasswordArgs): Promise<AccountResponse> {
    return this.account.newPassword(args.password, args.emailOrUsername, args.otp);
  }
}
