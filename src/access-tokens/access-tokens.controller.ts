import { Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Args } from '../common/args';
import { TOKEN_MANAGEMENT_REFUSED } from '../common/access-scopes';
import { AccessTokensRefused, Authenticated, CurrentUser } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiIdParam } from '../openapi/api-docs';
import { AccessTokensService, TOKEN_MESSAGES } from './access-tokens.service';
import { AccessTokenView, NewAccessTokenArgs, NewAccessTokenView } from './dto/access-token.dto';

/** The caller's personal access tokens; managed with a password login only, never with a token. */
@ApiTags('accounts')
@Controller('account/tokens')
@AccessTokensRefused(TOKEN_MANAGEMENT_REFUSED)
export class AccessTokensController {
  constructor(private readonly tokens: AccessTokensService) {}

  @Authenticated({
    summary: 'Make a personal access token; the answer shows its secret, this once',
    description:
      'Checked in this order: `name`, `scopes`, `expires_in_days`, then (403) `review` for an admin only and ' +
      '(409) the number of live tokens. The token is accepted as `Authorization: Bearer <token>` on the routes its ' +
      'scopes open (`x-svc-token-scope` of each operation) until it expires, is revoked, or the credentials change.',
    status: 201,
    data: NewAccessTokenView,
    fails: {
      400: [TOKEN_MESSAGES.name, TOKEN_MESSAGES.scopes, TOKEN_MESSAGES.days],
      403: [TOKEN_MESSAGES.review],
      409: [TOKEN_MESSAGES.limit],
    },
    args: NewAccessTokenArgs,
  })
  @Post()
  async create(
    @CurrentUser() caller: AuthUser,
    @Args() args: NewAccessTokenArgs,
  ): Promise<{ status: 'success'; data: NewAccessTokenView }> {
    return success(await this.tokens.create(caller, args));
  }

  @Authenticated({
    summary: "The caller's live personal access tokens, newest first",
    data: [AccessTokenView],
  })
  @Get()
  async list(@CurrentUser() caller: AuthUser): Promise<{ status: 'success'; data: AccessTokenView[] }> {
    return success(await this.tokens.list(caller.id));
  }

  @Authenticated({
    summary: 'Revoke one of the caller’s personal access tokens',
    data: null,
    fails: { 404: [TOKEN_MESSAGES.notFound] },
  })
  @ApiIdParam('tokenId')
  @Delete(':tokenId')
  async revoke(
    @CurrentUser() caller: AuthUser,
    @Param('tokenId', ParseIdPipe) id: number | null,
  ): Promise<{ status: 'success'; data: null }> {
    await this.tokens.revoke(caller.id, id);
    return success(null);
  }
}
