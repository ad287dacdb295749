import { Controller, Get, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { Request } from 'express';
import { Public } from '../common/decorators';
import { AccountResponse } from '../common/envelopes';
import { readParam } from '../common/request-params';
import { AccountService } from './account.service';

@Public()
@Controller()
export class AccountController {
  constructor(private readonly account: AccountService) {}

  @Post('register')
  @HttpCode(200)
  @UseGuards(ThrottlerGuard)
  register(@Req() request: Request): Promise<AccountResponse> {
    return this.account.register({
      username: readParam(request, 'username'),
      email: readParam(request, 'email'),
      password: readParam(request, 'password'),
      confirmPassword: readParam(request, 'confirm_password'),
    });
  }

  @Post('generate/confirm_email')
  @HttpCode(200)
  @UseGuards(ThrottlerGuard)
  generateConfirmation(@Req() request: Request): Promise<AccountResponse> {
    return this.account.generateConfirmation(readParam(request, 'email'));
  }

  @Get('verify/confirm_email/:keyValue')
  verifyConfirmation(@Param('keyValue') keyValue: string): Promise<AccountResponse> {
    return this.account.verifyConfirmation(keyValue);
  }

  @Post('generate/otp')
  @HttpCode(200)
  @UseGuards(ThrottlerGuard)
  generateOtp(@Req() request: Request): Promise<AccountResponse> {
    return this.account.generateOtp(readParam(request, 'emailOrUsername'));
  }

  @Post('verify/otp')
  @HttpCode(200)
  @UseGuards(ThrottlerGuard)
  verifyOtp(@Req() request: Request): Promise<AccountResponse> {
    return this.account.verifyOtp(readParam(request, 'emailOrUsername'), readParam(request, 'otp'));
  }

  @Post('new-password')
  @HttpCode(200)
  @UseGuards(ThrottlerGuard)
  newPassword(@Req() request: Request): Promise<AccountResponse> {
    return this.account.newPassword(
      readParam(request, 'password'),
      readParam(request, 'emailOrUsername'),
      readParam(request, 'otp'),
    );
  }
}
