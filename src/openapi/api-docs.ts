import { applyDecorators, Type } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtension,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiQuery,
  ApiResponse,
  ApiSchema,
  getSchemaPath,
} from '@nestjs/swagger';
import type { HeaderObject, ReferenceObject, SchemaObject } from '@nestjs/swagger';
import {
  ADMIN_NEEDS_SECOND_FACTOR,
  lacksScope,
  TOKEN_MANAGEMENT_REFUSED,
  TOKEN_REFUSED,
} from '../common/access-scopes';
import { MAX_ID } from '../common/request-params';

/** Marks an operation as needing no token; openapi.ts turns it into `security: []`. */
export const PUBLIC_EXTENSION = 'x-svc-public';
/** The scope a personal access token needs on the operation, or `none` (openapi.ts fills in the rule's). */
export const TOKEN_SCOPE_EXTENSION = 'x-svc-token-scope';
export const ApiPublic = () => ApiExtension(PUBLIC_EXTENSION, true);

/** A finding of the upload's validator: the rule it broke and where. */
const FINDING: SchemaObject = {
  type: 'object',
  properties: {
    rule: { type: 'string' },
    message: { type: 'string' },
    line: { type: 'integer' },
    column: { type: 'integer' },
  },
};

/** `errors`: why, per argument or check (`{name: why}`), or a list (the validator's findings). */
const ERRORS: SchemaObject[] = [
  { type: 'object', additionalProperties: { type: 'string' } },
  { type: 'array', items: { anyOf: [{ type: 'string' }, FINDING] } },
];

/** The body of every error (all-exceptions.filter.ts). Open: a refusal may carry more for its clients. */
@ApiSchema({ name: 'Fail' })
export class FailResponse {
  @ApiProperty({ enum: ['fail'] })
  status!: 'fail';

  @ApiProperty()
  message!: string;

  @ApiPropertyOptional({
    description:
      "Several findings: per argument or per check (`{name: why}`), or a list (the validator's findings)",
    anyOf: ERRORS,
  })
  errors?: unknown;

  @ApiPropertyOptional({
    type: 'object',
    description:
      "An account endpoint's refusal repeats `status` and `message` here; an upload refusal puts its findings " +
      'here, where the marketplace client reads them: `errors` as lines of text (`name: must be 3 to 128 ' +
      "characters`, `line 1, column 8: <message> (<rule>)`), and the validator's structured `findings`",
    properties: {
      status: { type: 'string', enum: ['fail'] },
      message: { type: 'string' },
      errors: { type: 'array', items: { type: 'string' } },
      findings: { type: 'array', items: FINDING },
    },
  })
  data?: unknown;

  @ApiPropertyOptional({ description: 'Only on 500: the id under which the error was logged' })
  error_id?: string;
}

/** `status` and `message` of an account answer, repeated under `data` for the original web client. */
@ApiSchema({ name: 'AccountResponseData' })
export class AccountResponseData {
  @ApiProperty({ enum: ['success', 'fail'] })
  status!: 'success' | 'fail';

  @ApiProperty()
  message!: string;

  @ApiPropertyOptional({ description: 'Only with `Link Expired`: the address to send a new link to' })
  email?: string;
}

/** The answer of an account endpoint (common/envelopes.ts), success and failure alike. */
@ApiSchema({ name: 'AccountResponse' })
export class AccountResponseBody {
  @ApiProperty({ enum: ['success', 'fail'] })
  status!: 'success' | 'fail';

  @ApiProperty({ description: 'The text of the contract' })
  message!: string;

  @ApiPropertyOptional({ description: 'Only with `Link Expired`: the address to send a new link to' })
  email?: string;

  @ApiProperty({
    type: AccountResponseData,
    description:
      'The same `status` and `message` (and `email`) again: the original web client reads `data.status` and `data.message`',
  })
  data!: AccountResponseData;
}

/** What a successful login's `message` holds. */
@ApiSchema({ name: 'LoginToken' })
export class LoginToken {
  @ApiProperty({ description: 'The bearer token for `Authorization: Bearer <jwt-token>`' })
  'jwt-token'!: string;
}

@ApiSchema({ name: 'LoginSucceededData' })
export class LoginSucceededData {
  @ApiProperty({ enum: ['success'] })
  status!: 'success';

  @ApiProperty({ type: LoginToken })
  message!: LoginToken;
}

/** A login that succeeded: the token under `message` (and `data.message`). */
@ApiSchema({ name: 'LoginSucceeded' })
export class LoginSucceeded {
  @ApiProperty({ enum: ['success'] })
  status!: 'success';

  @ApiProperty({ type: LoginToken })
  message!: LoginToken;

  @ApiProperty({ type: LoginSucceededData, description: 'The same again, for the original web client' })
  data!: LoginSucceededData;
}

@ApiSchema({ name: 'AccountFailureData' })
export class AccountFailureData {
  @ApiProperty({ enum: ['fail'] })
  status!: 'fail';

  @ApiProperty()
  message!: string;
}

/** An account endpoint's failure, still HTTP 200. */
@ApiSchema({ name: 'AccountFailure' })
export class AccountFailure {
  @ApiProperty({ enum: ['fail'] })
  status!: 'fail';

  @ApiProperty({ description: 'The text of the contract' })
  message!: string;

  @ApiProperty({ type: AccountFailureData, description: 'The same again, for the original web client' })
  data!: AccountFailureData;
}

/** Login's answer: the token, or a failure; `status` tells which. */
export const LOGIN_ANSWER: SchemaObject = {
  oneOf: [{ $ref: getSchemaPath(LoginSucceeded) }, { $ref: getSchemaPath(AccountFailure) }],
};

/**
 * What `data` holds: a response DTO class, `[Class]` for a list of them, `null` for
 * operations whose data is always null, or a schema built by `oneOf` / `mapOf`.
 */
export type DataSpec = Type<unknown> | [Type<unknown>] | null | BuiltSchema;

export interface BuiltSchema {
  schema: SchemaObject | ReferenceObject;
  models: Array<Type<unknown>>;
}

const ref = (model: Type<unknown>): ReferenceObject => ({ $ref: getSchemaPath(model) });

/** One of several DTO classes, e.g. the plugin view a caller gets. */
export const oneOf = (...models: Array<Type<unknown>>): BuiltSchema => ({
  schema: { oneOf: models.map(ref) },
  models,
});

/** A schema written out, for data no DTO class describes (e.g. a health check's result). */
export const inline = (schema: SchemaObject): BuiltSchema => ({ schema, models: [] });

/** An object of names to lists of a DTO class. */
export const mapOfLists = (model: Type<unknown>, description: string): BuiltSchema => ({
  schema: { type: 'object', description, additionalProperties: { type: 'array', items: ref(model) } },
  models: [model],
});

function built(data: DataSpec): BuiltSchema {
  // OpenAPI 3.0 has no null type: a nullable type whose one value is null.
  if (data === null)
    return {
      schema: { type: 'string', nullable: true, enum: [null], description: 'Always null' },
      models: [],
    };
  if (Array.isArray(data)) return { schema: { type: 'array', items: ref(data[0]) }, models: [data[0]] };
  if (typeof data === 'function') return { schema: ref(data), models: [data] };
  return data;
}

/** `{status: 'success', data}` around the data's schema. */
export function ApiDataResponse(status: number, data: DataSpec, headers?: Record<string, HeaderObject>) {
  const { schema, models } = built(data);
  return applyDecorators(
    ApiExtraModels(...models),
    ApiResponse({
      status,
      headers,
      description: status === 201 ? 'Created' : status === 202 ? 'Accepted' : 'Success',
      schema: {
        type: 'object',
        required: ['status', 'data'],
        properties: { status: { type: 'string', enum: ['success'] }, data: schema },
      },
    }),
  );
}

/** Sent with every 429 (api-error.ts, tooManyRequests). */
const RETRY_AFTER: HeaderObject = {
  description: 'Seconds to wait before trying again',
  required: true,
  schema: { type: 'integer', minimum: 1 },
};

/**
 * Sent by the account endpoints' limits (src/rate-limit/limit-headers.ts) while RATE_LIMIT is
 * on: the route's quotas, and the caller's own counters (on a 429, the one that refused).
 */
export const RATE_LIMIT_HEADERS: Record<string, HeaderObject> = {
  'RateLimit-Policy': {
    description:
      'The quotas of the route (IETF draft-ietf-httpapi-ratelimit-headers): `"<name>";q=<requests>;w=<window seconds>`, comma-separated',
    schema: { type: 'string', example: '"address";q=30;w=60, "identifier-address";q=10;w=900' },
  },
  RateLimit: {
    description:
      'What is left: `"<name>";r=<remaining>;t=<seconds until a request is free again>` for the caller\'s own counters, and on 429 for the one that refused',
    schema: { type: 'string', example: '"address";r=29;t=60, "identifier-address";r=9;t=900' },
  },
};

/** The fail messages an operation answers, by HTTP status. */
export type FailMessages = Partial<Record<number, readonly string[]>>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing, invalid, expired or revoked token (`Unauthorized`)',
  403: 'Forbidden (`Admin privileges required`)',
  429: '`Too many requests`; `Retry-After` gives the seconds to wait',
  503: '`Service unavailable`',
};

const quoted = (messages: readonly string[]): string =>
  messages.map((message) => `\`${message}\``).join(', ');

/** Each status with the exact messages it comes with, in the fail envelope. */
export function ApiFailMessages(fails: FailMessages, { rateLimitHeaders = false } = {}) {
  return applyDecorators(
    ApiExtraModels(FailResponse),
    ...Object.entries(fails).map(([status, messages]) =>
      ApiResponse({
        status: Number(status),
        description: messages?.length ? quoted(messages) : STATUS_TEXT[Number(status)],
        schema: ref(FailResponse),
        ...(Number(status) === 429
          ? { headers: { 'Retry-After': RETRY_AFTER, ...(rateLimitHeaders ? RATE_LIMIT_HEADERS : {}) } }
          : {}),
      }),
    ),
  );
}

/** Fail statuses with their general meaning, where the messages are not the operation's own. */
export function ApiFailResponses(...statuses: number[]) {
  return ApiFailMessages(Object.fromEntries(statuses.map((status) => [status, []])));
}

/**
 * 401 from the JWT guard and, on admin routes, 403 from the admin guard, then the
 * operation's own: the access rule and its documentation are one fact.
 */
export function withGuards(access: 'user' | 'admin', own: FailMessages = {}): FailMessages {
  const fails: FailMessages = { 401: ['Unauthorized', 'Authorization header must be "Bearer <token>"'] };
  // A personal access token on a route its scopes do not open (src/auth/jwt-auth.guard.ts).
  fails[403] = [
    ...(access === 'admin' ? ['Admin privileges required', ADMIN_NEEDS_SECOND_FACTOR] : []),
    lacksScope('<scope>'),
    TOKEN_REFUSED,
    TOKEN_MANAGEMENT_REFUSED,
  ];
  for (const [status, messages] of Object.entries(own)) {
    fails[Number(status)] = [...(fails[Number(status)] ?? []), ...(messages ?? [])];
  }
  return fails;
}

/**
 * Request arguments of `@Args()`: a body in any of its encodings, or the same names in the
 * query string (hence not required).
 */
export function ApiArgsBody(args: Type<unknown>) {
  return applyDecorators(
    ApiConsumes('application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'),
    ApiBody({ description: 'Also accepted as query-string arguments.', required: false, type: args }),
  );
}

/** Query-string arguments of `@Args()` on a GET: each property of the DTO class, optional. */
export function ApiArgsQuery(args: Type<unknown>) {
  return applyDecorators(ApiExtraModels(args), ApiQuery({ type: args, required: false }));
}

/** OPTIONS: public, as a CORS preflight carries no token; the methods are told in `Allow`. */
export function ApiOptionsEndpoint(allow: string) {
  return applyDecorators(
    ApiOperation({
      summary: 'The supported methods',
      description: `Needs no token. Any other method answers 405 \`Method not allowed\` with the same \`Allow\` header.`,
    }),
    ApiNoContentResponse({
      description: 'No body',
      headers: { Allow: { description: allow, schema: { type: 'string' } } },
    }),
  );
}

/** A row id in a path, as ParseIdPipe reads it. */
export const ApiIdParam = (name: string) =>
  ApiParam({
    name,
    schema: { type: 'integer', minimum: 1, maximum: MAX_ID },
    description: 'Decimal digits without a leading zero; any other spelling names nothing',
  });

/**
 * Decorators written as a list and applied as if stacked above a method (the last one first),
 * so a route's documentation kept apart from its handler lists its parameters in the same order.
 */
export const routeDocs = (...decorators: Array<MethodDecorator | (MethodDecorator & ClassDecorator)>) =>
  applyDecorators(...[...decorators].reverse());
