import { Controller, Get, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiTags } from '@nestjs/swagger';
import { LoginArgs } from '../account/dto/account-args';
import { loginSeen } from '../account-logins/login-seen';
import { Args } from '../common/args';
import { AccessTokensRefused, AccountEndpoint, Authenticated, CurrentUser } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { AccountResponse, success } from '../common/envelopes';
import { AccountRateLimit } from '../rate-limit/account-rate-limit';
import { routeDocs } from '../openapi/api-docs';
import { SECOND_FACTOR_MESSAGES } from '../second-factor/second-factor-messages';
import { AuthService } from './auth.service';
import { CurrentUserView, currentUserView } from './current-user.view';
import { AccountFailure, LOGIN_ANSWER, LoginSucceeded } from '../openapi/api-docs';

@ApiTags('accounts')
@Controller()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @AccountEndpoint({
    summary: 'Log in; the message holds the JWT as `jwt-token`',
    args: LoginArgs,
    answer: { schema: LOGIN_ANSWER, models: [LoginSucceeded, AccountFailure] },
    messages: [
      'Your account is not active',
      'Invalid login credentials',
      'Missing email or username value',
      'Missing password value',
      SECOND_FACTOR_MESSAGES.loginRefused,
    ],
    rateLimited: true,
  })
  @Post('login')
  @AccountRateLimit({
    route: 'login',
    identifier: 'emailOrUsername',
    // A wrong second-factor code is a guess like a wrong password, counted by the same limits.
    failures: ['Invalid login credentials', SECOND_FACTOR_MESSAGES.loginRefused],
    locksAccount: true,
  })
  login(@Args() args: LoginArgs, @Req() request: FastifyRequest): Promise<AccountResponse> {
    return this.auth.login(args.emailOrUsername, args.password, args.otp, loginSeen(request));
  }

  @AccountEndpoint({
    summary: 'Log out: the presented token is revoked',
    messages: ['Logged out'],
    token: true,
  })
  @Get('logout')
  @AccessTokensRefused()
  logout(@CurrentUser() user: AuthUser): Promise<AccountResponse> {
    return this.auth.logout(user.tokenHash);
  }

  @routeDocs(Authenticated({ summary: 'The caller: who the token says they are', data: CurrentUserView }))
  @Get('me')
  me(@CurrentUser() caller: AuthUser): { status: 'success'; data: CurrentUserView } {
    return success(currentUserView(caller));
  }
}
