import { Controller, Delete, Get, Param, Post, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Args } from '../common/args';
import { TOKEN_MANAGEMENT_REFUSED } from '../common/access-scopes';
import { AccessTokensRefused, Authenticated, CurrentUser } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiIdParam } from '../openapi/api-docs';
import { AccountLoginsService, LOGIN_MESSAGES } from './account-logins.service';
import { LoginsEndedView, LoginView, PasswordChangeArgs } from './dto/account-logins.dto';

/**
 * The caller's logins (the JWTs of password logins) and the password change. With a password
 * login only: a personal access token is refused (403) on every route here.
 */
@ApiTags('accounts')
@Controller('account')
export class AccountLoginsController {
  constructor(private readonly logins: AccountLoginsService) {}

  @Authenticated({
    summary: "The caller's live logins, newest first; `current` marks the one of this request",
    data: [LoginView],
  })
  @AccessTokensRefused()
  @Get('logins')
  async list(@CurrentUser() caller: AuthUser): Promise<{ status: 'success'; data: LoginView[] }> {
    return success(await this.logins.list(caller));
  }

  @Authenticated({
    summary: 'End one of the caller’s logins (the current one too): its token is refused at once',
    data: null,
    fails: { 404: [LOGIN_MESSAGES.notFound] },
  })
  @AccessTokensRefused()
  @ApiIdParam('loginId')
  @Delete('logins/:loginId')
  async end(
    @CurrentUser() caller: AuthUser,
    @Param('loginId', ParseIdPipe) id: number | null,
  ): Promise<{ status: 'success'; data: null }> {
    await this.logins.end(caller, id);
    return success(null);
  }

  @Authenticated({
    summary: 'End every login of the caller but the current one (access tokens stay: see /account/tokens)',
    data: LoginsEndedView,
  })
  @AccessTokensRefused()
  @Post('logout-everywhere')
  async endOthers(@CurrentUser() caller: AuthUser): Promise<{ status: 'success'; data: LoginsEndedView }> {
    return success(await this.logins.endOthers(caller));
  }

  @Authenticated({
    summary: 'Change the password with the current one; the current login stays, every other one ends',
    description:
      'Checked in this order: `current_password`, `password` and `confirm_password` given, the two the same, ' +
      '`password` strong (the register form’s rules and messages), then (403) the current password. A wrong ' +
      'current password counts as a failed login does (429 past the limit; the account locks past its bound). ' +
      'Every other login and every access token of the account ends, and the owner is mailed.',
    data: null,
    fails: {
      400: [
        LOGIN_MESSAGES.missingCurrent,
        LOGIN_MESSAGES.missingPassword,
        LOGIN_MESSAGES.missingConfirm,
        LOGIN_MESSAGES.mismatch,
        LOGIN_MESSAGES.weak,
      ],
      403: [LOGIN_MESSAGES.wrongCurrent, LOGIN_MESSAGES.locked],
      409: [LOGIN_MESSAGES.changedMeanwhile],
      429: ['Too many requests'],
      503: ['Service unavailable'],
    },
    args: PasswordChangeArgs,
  })
  @AccessTokensRefused(TOKEN_MANAGEMENT_REFUSED)
  @Post('password')
  async changePassword(
    @CurrentUser() caller: AuthUser,
    @Args() args: PasswordChangeArgs,
    @Req() request: FastifyRequest,
  ): Promise<{ status: 'success'; data: null }> {
    await this.logins.changePassword(caller, args, request.ip);
    return success(null);
  }
}
