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
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { MAX_ID } from '../common/request-params';

/** Marks an operation as needing no token; openapi.ts turns it into `security: []`. */
export const PUBLIC_EXTENSION = 'x-svc-public';
export const ApiPublic = () => ApiExtension(PUBLIC_EXTENSION, true);

/** The body of every error (all-exceptions.filter.ts). */
@ApiSchema({ name: 'Fail' })
export class FailResponse {
  @ApiProperty({ enum: ['fail'] })
  status!: 'fail';

  @ApiProperty()
  message!: string;

  @ApiPropertyOptional({ description: 'Several findings, e.g. per field or per validator rule' })
  errors?: unknown;

  @ApiPropertyOptional({ description: 'Only on 500: the id under which the error was logged' })
  error_id?: string;
}

/** `status` and `message` of an account answer, repeated under `data` for the original web client. */
@ApiSchema({ name: 'AccountResponseData' })
export class AccountResponseData {
  @ApiProperty({ enum: ['success', 'fail'] })
  status!: 'success' | 'fail';

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'object' }] })
  message!: unknown;

  @ApiPropertyOptional({ description: 'Only with `Link Expired`: the address to send a new link to' })
  email?: string;
}

/** The answer of an account endpoint (common/envelopes.ts), success and failure alike. */
@ApiSchema({ name: 'AccountResponse' })
export class AccountResponseBody {
  @ApiProperty({ enum: ['success', 'fail'] })
  status!: 'success' | 'fail';

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'object' }],
    description: 'The text of the contract; on login success `{"jwt-token": <JWT>}`',
  })
  message!: unknown;

  @ApiPropertyOptional({ description: 'Only with `Link Expired`: the address to send a new link to' })
  email?: string;

  @ApiProperty({
    type: AccountResponseData,
    description:
      'The same `status` and `message` (and `email`) again: the original web client reads `data.status` and `data.message`',
  })
  data!: AccountResponseData;
}

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
  if (data === null)
    return { schema: { nullable: true, enum: [null], description: 'Always null' }, models: [] };
  if (Array.isArray(data)) return { schema: { type: 'array', items: ref(data[0]) }, models: [data[0]] };
  if (typeof data === 'function') return { schema: ref(data), models: [data] };
  return data;
}

/** `{status: 'success', data}` around the data's schema. */
export function ApiDataResponse(status: number, data: DataSpec) {
  const { schema, models } = built(data);
  return applyDecorators(
    ApiExtraModels(...models),
    ApiResponse({
      status,
      description: status === 201 ? 'Created' : 'Success',
      schema: {
        type: 'object',
        required: ['status', 'data'],
        properties: { status: { type: 'string', enum: ['success'] }, data: schema },
      },
    }),
  );
}

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
export function ApiFailMessages(fails: FailMessages) {
  return applyDecorators(
    ApiExtraModels(FailResponse),
    ...Object.entries(fails).map(([status, messages]) =>
      ApiResponse({
        status: Number(status),
        description: messages?.length ? quoted(messages) : STATUS_TEXT[Number(status)],
        schema: ref(FailResponse),
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
  const fails: FailMessages = { 401: ['Unauthorized'] };
  if (access === 'admin') fails[403] = ['Admin privileges required'];
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
