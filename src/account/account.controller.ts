import { Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyRequest as Request } from 'fastify';
import { Public } from '../common/decorators';
import { AccountResponse } from '../common/envelopes';
import { readParam } from '../common/request-params';
import { AccountRateLimit } from '../rate-limit/account-rate-limit';
import { ApiAccountEndpoint } from '../openapi/api-docs';
import { AccountService } from './account.service';

/** Wrong OTPs are failed guesses for the account limits. */
const OTP_FAILURES = ['Invalid OTP'];

@ApiTags('accounts')
@Public()
@Controller()
export class AccountController {
  constructor(private readonly account: AccountService) {}

  @ApiAccountEndpoint({
    summary: 'Register a user (inactive until the email is confirmed)',
    params: {
      username: 'User name',
      email: 'Email address',
      password: 'Strong password',
      confirm_password: 'Same password again',
    },
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
  @HttpCode(200)
  @AccountRateLimit({ route: 'register', identifier: 'email' })
  register(@Req() request: Request): Promise<AccountResponse> {
    return this.account.register({
      username: readParam(request, 'username'),
      email: readParam(request, 'email'),
      password: readParam(request, 'password'),
      confirmPassword: readParam(request, 'confirm_password'),
    });
  }

  @ApiAccountEndpoint({
    summary: 'Mail an account activation link (valid 1 hour)',
    params: { email: 'Email address of the account' },
    messages: ['Email send successful', 'Missing email value'],
    rateLimited: true,
  })
  @Post('generate/confirm_email')
  @HttpCode(200)
  @AccountRateLimit({ route: 'confirm_email', identifier: 'email' })
  generateConfirmation(@Req() request: Request): Promise<AccountResponse> {
    return this.account.generateConfirmation(readParam(request, 'email'));
  }

  @ApiAccountEndpoint({
    summary: 'Activate the account of an emailed link key',
    messages: ['Email Verified', 'Link Expired', 'Invalid Link'],
  })
  @Get('verify/confirm_email/:keyValue')
  verifyConfirmation(@Param('keyValue') keyValue: string): Promise<AccountResponse> {
    return this.account.verifyConfirmation(keyValue);
  }

  @ApiAccountEndpoint({
    summary: 'Mail a one-time password for a password change (valid 5 minutes)',
    params: { emailOrUsername: 'Email or user name' },
    messages: ['Otp Send Successful', "Username / Email doesn't exist"],
    rateLimited: true,
  })
  @Post('generate/otp')
  @HttpCode(200)
  @AccountRateLimit({ route: 'otp', identifier: 'emailOrUsername' })
  generateOtp(@Req() request: Request): Promise<AccountResponse> {
    return this.account.generateOtp(readParam(request, 'emailOrUsername'));
  }

  @ApiAccountEndpoint({
    summary: 'Check a one-time password',
    params: { emailOrUsername: 'Email or user name', otp: 'The mailed 6-digit code' },
    messages: ['OTP Verified', 'Invalid OTP', "Username / Email doesn't exist"],
    rateLimited: true,
  })
  @Post('verify/otp')
  @HttpCode(200)
  @AccountRateLimit({ route: 'verify_otp', identifier: 'emailOrUsername', failures: OTP_FAILURES })
  verifyOtp(@Req() request: Request): Promise<AccountResponse> {
    return this.account.verifyOtp(readParam(request, 'emailOrUsername'), readParam(request, 'otp'));
  }

  @ApiAccountEndpoint({
    summary: 'Set a new password with a valid one-time password',
    params: {
      password: 'New strong password',
      emailOrUsername: 'Email or user name',
      otp: 'The mailed 6-digit code',
    },
    messages: [
      'Password Change Successful',
      'Choose a strong password',
      'Invalid OTP',
      'Password Change Unsuccessful',
    ],
    rateLimited: true,
  })
  @Post('new-password')
  @HttpCode(200)
  @AccountRateLimit({ route: 'new_password', identifier: 'emailOrUsername', failures: OTP_FAILURES })
  newPassword(@Req() request: Request): Promise<AccountResponse> {
    return this.account.newPassword(
      readParam(request, 'password'),
      readParam(request, 'emailOrUsername'),
      readParam(request, 'otp'),
    );
  }
}
