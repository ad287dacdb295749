import { Controller, Delete, Get, Param, Post, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { methodNotAllowed } from '../common/api-error';
import { Args } from '../common/args';
import { Authenticated, CurrentUser, OptionsRoute, UnsupportedMethods } from '../common/decorators';
import type { AuthUser } from '../common/decorators';
import { success } from '../common/envelopes';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiIdParam } from '../openapi/api-docs';
import {
  INCORRECT_PARAMETERS,
  NewTargetArgs,
  TargetListArgs,
  TargetView,
  TOTAL_COUNT_HEADER,
} from './dto/target.dto';
import { TARGET_NOT_FOUND, TargetsService } from './targets.service';

const LIST_ALLOW = 'GET, POST, OPTIONS';
const ONE_ALLOW = 'GET, DELETE, OPTIONS';

const ApiTargetId = () => ApiIdParam('targetId');

/** A user's own targets; every route needs a token, and other users' targets do not exist here. */
@ApiTags('targets')
@Controller()
export class TargetsController {
  constructor(private readonly targets: TargetsService) {}

  @Authenticated({
    summary: "The targets of the caller's active session, by id",
    description:
      'A list, as the original framework answers and its web client reads it (none without an active ' +
      'session). `limit` and `offset` page it; `X-Total-Count` holds the number of matches over all pages. ' +
      '400 with `errors` naming `limit` or `offset` when one is out of range.',
    data: [TargetView],
    headers: {
      [TOTAL_COUNT_HEADER]: {
        description: 'The number of matches over all pages',
        required: true,
        schema: { type: 'integer', minimum: 0 },
      },
    },
    fails: { 400: [INCORRECT_PARAMETERS] },
    query: TargetListArgs,
  })
  @Get('targets')
  async list(
    @CurrentUser() user: AuthUser,
    @Args() args: TargetListArgs,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ status: 'success'; data: TargetView[] }> {
    const { total, targets } = await this.targets.listOfActiveSession(user.id, {
      targetUrl: args.target_url,
      hostName: args.host_name,
      search: args.search,
      limit: args.limit,
      offset: args.offset,
    });
    void reply.header(TOTAL_COUNT_HEADER, String(total));
    return success(targets);
  }

  @Authenticated({
    summary: "Add a target to the caller's active session",
    description:
      'As in the original framework, the target joins the active session; without one, the session ' +
      '`default session` is made (or activated) for it. A URL the caller already has joins the session ' +
      'as it is (`scope` unchanged). 400 `Incorrect query parameters` when `scope` is not a flag; 409 when ' +
      'the active session holds this URL already, or when the caller has MAX_TARGETS_PER_USER targets ' +
      '(a new session for it counts against MAX_SESSIONS_PER_USER).',
    status: 201,
    data: TargetView,
    fails: {
      400: ['Invalid target URL', INCORRECT_PARAMETERS],
      409: [
        'Target already exists',
        'Target limit reached: at most <MAX_TARGETS_PER_USER> targets per user; delete one first',
        'Session limit reached: at most <MAX_SESSIONS_PER_USER> sessions per user; delete one first',
      ],
    },
    args: NewTargetArgs,
  })
  @Post('targets')
  async create(
    @CurrentUser() user: AuthUser,
    @Args() args: NewTargetArgs,
  ): Promise<{ status: 'success'; data: TargetView }> {
    // Never null here: NewTargetArgs refuses a URL it cannot parse.
    return success(await this.targets.create(user.id, args.target_url!, args.scope ?? true));
  }

  @Authenticated({
    summary: "One of the caller's targets",
    data: TargetView,
    fails: { 404: [TARGET_NOT_FOUND] },
  })
  @ApiTargetId()
  @Get('targets/:targetId')
  async get(
    @CurrentUser() user: AuthUser,
    @Param('targetId', ParseIdPipe) targetId: number | null,
  ): Promise<{ status: 'success'; data: TargetView }> {
    return success(await this.targets.get(user.id, targetId));
  }

  @Authenticated({
    summary: "Delete one of the caller's targets",
    description: 'It leaves every session that held it.',
    data: null,
    fails: { 404: [TARGET_NOT_FOUND] },
  })
  @ApiTargetId()
  @Delete('targets/:targetId')
  async remove(
    @CurrentUser() user: AuthUser,
    @Param('targetId', ParseIdPipe) targetId: number | null,
  ): Promise<{ status: 'success'; data: null }> {
    await this.targets.remove(user.id, targetId);
    return success(null);
  }

  @OptionsRoute('targets', LIST_ALLOW)
  optionsOfList(): void {}

  @ApiTargetId()
  @OptionsRoute('targets/:targetId', ONE_ALLOW)
  optionsOfOne(): void {}

  @UnsupportedMethods('targets')
  unsupportedOnList(): never {
    throw methodNotAllowed(LIST_ALLOW);
  }

  @UnsupportedMethods('targets/:targetId')
  unsupportedOnOne(): never {
    throw methodNotAllowed(ONE_ALLOW);
  }
}
