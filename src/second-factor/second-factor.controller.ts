import { Controller, Delete, Post, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { LOGIN_MESSAGES } from '../account-logins/login-messages';
import { Args } from '../common/args';
import { TOKEN_MANAGEMENT_REFUSED } from '../common/access-scopes';
import { AccessTokensRefused, Authenticated, CurrentUser } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import {
  EnrolmentArgs,
  EnrolmentView,
  RecoveryCodesView,
  SecondFactorCodeArgs,
} from './dto/second-factor.dto';
import { SECOND_FACTOR_MESSAGES as MESSAGES } from './second-factor-messages';
import { SecondFactorService } from './second-factor.service';

/** The caller's TOTP; managed with a password login only, never with an access token. */
@ApiTags('accounts')
@Controller('account/totp')
@AccessTokensRefused(TOKEN_MANAGEMENT_REFUSED)
export class SecondFactorController {
  constructor(private readonly factors: SecondFactorService) {}

  @Authenticated({
    summary: 'Begin TOTP enrolment: a new secret, pending until confirmed; the answer shows it, this once',
    description:
      'Needs the current password (`current_password`), checked as the password change checks it: a wrong ' +
      'one counts as a failed login does (429 past the limit; the account locks past its bound). A pending ' +
      'secret is replaced by the next enrolment. RFC 6238: SHA-1, 6 digits, 30-second steps.',
    status: 201,
    data: EnrolmentView,
    fails: {
      400: [LOGIN_MESSAGES.missingCurrent],
      403: [LOGIN_MESSAGES.wrongCurrent, LOGIN_MESSAGES.locked],
      409: [MESSAGES.alreadyOn, LOGIN_MESSAGES.changedMeanwhile],
      429: ['Too many requests'],
      503: ['Service unavailable'],
    },
    args: EnrolmentArgs,
  })
  @Post()
  async enrol(
    @CurrentUser() caller: AuthUser,
    @Args() args: EnrolmentArgs,
    @Req() request: FastifyRequest,
  ): Promise<{ status: 'success'; data: EnrolmentView }> {
    return success(await this.factors.enrol(caller, args.current_password, request.ip));
  }

  @Authenticated({
    summary:
      'Turn TOTP on with a first code of the pending secret; the answer shows ten recovery codes, this once',
    description:
      'Every other session of the account ends (its other JWTs and its access tokens); the calling one stays. ' +
      'From then on login needs `otp` as well. The owner is mailed.',
    data: RecoveryCodesView,
    fails: {
      400: [MESSAGES.invalidCode],
      409: [MESSAGES.alreadyOn, MESSAGES.nothingPending, MESSAGES.replaced],
      429: ['Too many requests'],
    },
    args: SecondFactorCodeArgs,
  })
  @Post('confirm')
  async confirm(
    @CurrentUser() caller: AuthUser,
    @Args() args: SecondFactorCodeArgs,
  ): Promise<{ status: 'success'; data: RecoveryCodesView }> {
    return success(await this.factors.confirm(caller, args.otp));
  }

  @Authenticated({
    summary: 'Turn TOTP off with a current code or a recovery code',
    description:
      'The secret and the recovery codes are deleted; login needs the password only again. The owner is mailed.',
    data: null,
    fails: { 400: [MESSAGES.invalidCode], 409: [MESSAGES.notOn], 429: ['Too many requests'] },
    args: SecondFactorCodeArgs,
  })
  @Delete()
  async disable(
    @CurrentUser() caller: AuthUser,
    @Args() args: SecondFactorCodeArgs,
  ): Promise<{ status: 'success'; data: null }> {
    await this.factors.disable(caller, args.otp);
    return success(null);
  }
}
