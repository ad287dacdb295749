import { Controller, Get, HttpCode, Post, Req, UseGuards } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { Request } from 'express';
import { CurrentUser, MissingTokenIsBadRequest, Public } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { AccountResponse } from '../common/envelopes';
import { readParam } from '../common/request-params';
import { AuthService } from './auth.service';

@Controller()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('login')
  @HttpCode(200)
  @UseGuards(ThrottlerGuard)
  login(@Req() request: Request): Promise<AccountResponse> {
    return this.auth.login(readParam(request, 'emailOrUsername'), readParam(request, 'password'));
  }

  @Get('logout')
  @MissingTokenIsBadRequest()
  logout(@CurrentUser() user: AuthUser): Promise<AccountResponse> {
    return this.auth.logout(user.tokenHash);
  }
}
