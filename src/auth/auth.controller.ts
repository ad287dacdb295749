import { Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyRequest as Request } from 'fastify';
import { CurrentUser, MissingTokenIsBadRequest, Public } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { AccountResponse } from '../common/envelopes';
import { readParam } from '../common/request-params';
import { AccountRateLimit } from '../rate-limit/account-rate-limit';
import { ApiAccountEndpoint, ApiFailResponses } from '../openapi/api-docs';
import { AuthService } from './auth.service';

@ApiTags('accounts')
@Controller()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @ApiAccountEndpoint({
    summary: 'Log in; the message holds the JWT as `jwt-token`',
    params: { emailOrUsername: 'Email or user name', password: 'Password' },
    messages: [
      'Your account is not active',
      'Invalid login credentials',
      'Missing email or username value',
      'Missing password value',
    ],
    rateLimited: true,
  })
  @Public()
  @Post('login')
  @HttpCode(200)
  @AccountRateLimit({
    route: 'login',
    identifier: 'emailOrUsername',
    failures: ['Invalid login credentials'],
  })
  login(@Req() request: Request): Promise<AccountResponse> {
    return this.auth.login(readParam(request, 'emailOrUsername'), readParam(request, 'password'));
  }

  @ApiAccountEndpoint({
    summary: 'Log out: the presented token is revoked',
    messages: ['Logged out'],
  })
  @ApiFailResponses(400, 401)
  @Get('logout')
  @MissingTokenIsBadRequest()
  logout(@CurrentUser() user: AuthUser): Promise<AccountResponse> {
    return this.auth.logout(user.tokenHash);
  }
}
