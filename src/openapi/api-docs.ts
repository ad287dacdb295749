import { applyDecorators } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtension,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiResponse,
  ApiTooManyRequestsResponse,
  ApiServiceUnavailableResponse,
} from '@nestjs/swagger';
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';

/** Marks an operation as needing no token; openapi.ts turns it into `security: []`. */
export const PUBLIC_EXTENSION = 'x-svc-public';
export const ApiPublic = () => ApiExtension(PUBLIC_EXTENSION, true);

const NAMED_SCHEMAS = new Map<string, SchemaObject>();

/**
 * A schema listed once under `components/schemas` and referred to by name wherever it is
 * used; openapi.ts adds the listed ones to the document.
 */
export function namedSchema(name: string, schema: SchemaObject): ReferenceObject {
  const known = NAMED_SCHEMAS.get(name);
  if (known && known !== schema) throw new Error(`Two OpenAPI schemas are named ${name}`);
  NAMED_SCHEMAS.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}

export const namedSchemas = (): Record<string, SchemaObject> => Object.fromEntries(NAMED_SCHEMAS);

export const FAIL_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['status', 'message'],
  properties: {
    status: { type: 'string', enum: ['fail'] },
    message: { type: 'string' },
    errors: { description: 'Several findings, e.g. per field or per validator rule' },
    error_id: { type: 'string', description: 'Only on 500: the id under which the error was logged' },
  },
};

const ACCOUNT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['status', 'message'],
  properties: {
    status: { type: 'string', enum: ['success', 'fail'] },
    message: { oneOf: [{ type: 'string' }, { type: 'object' }] },
  },
};

const FAIL = namedSchema('Fail', FAIL_SCHEMA);

/** `data` of the operations whose success carries nothing. */
export const NULL_DATA: SchemaObject = { nullable: true, enum: [null], description: 'Always null' };

export function dataEnvelope(data: SchemaObject | ReferenceObject): SchemaObject {
  return {
    type: 'object',
    required: ['status', 'data'],
    properties: { status: { type: 'string', enum: ['success'] }, data },
  };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing, invalid, expired or revoked token (`Unauthorized`)',
  403: 'Forbidden (`Admin privileges required`)',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Payload too large',
  422: 'Unprocessable entity',
  429: 'Too many requests',
  503: 'Service unavailable',
};

/** The fail envelopes an operation can answer with, each with its HTTP status. */
export function ApiFailResponses(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, description: STATUS_TEXT[status], schema: FAIL })),
  );
}

/**
 * A spec account endpoint: public, parameters as JSON, urlencoded or multipart fields (or the
 * query string), HTTP 200 for success and failure alike; the spec's messages listed.
 */
export function ApiAccountEndpoint(options: {
  summary: string;
  params?: Record<string, string>;
  messages: string[];
  rateLimited?: boolean;
}) {
  const decorators = [
    ApiOperation({
      summary: options.summary,
      description: `Messages: ${options.messages.map((message) => `\`${message}\``).join(', ')}.`,
    }),
    ApiOkResponse({
      description: 'Success or failure, told by `status`',
      schema: namedSchema('AccountResponse', ACCOUNT_SCHEMA),
    }),
  ];
  if (options.params) {
    const properties = Object.fromEntries(
      Object.entries(options.params).map(([name, description]) => [name, { type: 'string', description }]),
    );
    decorators.push(
      ApiConsumes('application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'),
      ApiBody({ schema: { type: 'object', properties } }),
    );
  }
  if (options.rateLimited) {
    decorators.push(
      ApiTooManyRequestsResponse({
        description: '`Too many requests`; `Retry-After` gives the seconds to wait',
        schema: FAIL,
      }),
      ApiServiceUnavailableResponse({
        description: '`Service unavailable`: the database or the shared limit store did not answer',
        schema: FAIL,
      }),
    );
  }
  return applyDecorators(...decorators);
}

/** The fail messages an operation answers, by HTTP status. */
export type FailMessages = Partial<Record<number, readonly string[]>>;

const quoted = (messages: readonly string[]): string =>
  messages.map((message) => `\`${message}\``).join(', ');

/** Each status with the exact messages it comes with. */
export function ApiFailMessages(fails: FailMessages) {
  return applyDecorators(
    ...Object.entries(fails).map(([status, messages]) =>
      ApiResponse({ status: Number(status), description: quoted(messages ?? []), schema: FAIL }),
    ),
  );
}

/**
 * A `{status: 'success', data}` endpoint behind the bearer token: the schema of `data`, and
 * the fail statuses it answers with their messages. 401 (and 403 for admin routes, from the
 * guards) are added from `access`.
 */
export function ApiDataEndpoint(options: {
  summary: string;
  description?: string;
  access: 'user' | 'admin';
  /** `null` for operations whose data is always null. */
  data: SchemaObject | ReferenceObject | null;
  /** 201 for creations. */
  status?: 200 | 201;
  fails?: FailMessages;
}) {
  return applyDecorators(
    ApiOperation({ summary: options.summary, description: options.description }),
    ApiResponse({
      status: options.status ?? 200,
      description: options.status === 201 ? 'Created' : 'Success',
      schema: dataEnvelope(options.data ?? NULL_DATA),
    }),
    ApiFailMessages(withGuards(options.access, options.fails)),
  );
}

/**
 * A method and path the router serves only to refuse it, as the spec's rules say (e.g. POST
 * with a session id): no success, only the errors it answers.
 */
export function ApiRefusal(options: { summary: string; description?: string; fails: FailMessages }) {
  return applyDecorators(
    ApiOperation({ summary: options.summary, description: options.description }),
    ApiFailMessages(withGuards('user', options.fails)),
  );
}

/** 401 from the JWT guard and, on admin routes, 403 from the admin guard, then the operation's own. */
function withGuards(access: 'user' | 'admin', own: FailMessages = {}): FailMessages {
  const fails: FailMessages = { 401: ['Unauthorized'] };
  if (access === 'admin') fails[403] = ['Admin privileges required'];
  for (const [status, messages] of Object.entries(own)) {
    fails[Number(status)] = [...(fails[Number(status)] ?? []), ...(messages ?? [])];
  }
  return fails;
}

/**
 * Request arguments read from the body (JSON, urlencoded or multipart fields) or else from
 * the query string, as `readParam` does.
 */
export function ApiRequestArguments(schema: SchemaObject) {
  return applyDecorators(
    ApiConsumes('application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'),
    // Not required: the same arguments may come in the query string instead.
    ApiBody({ description: 'Also accepted as query-string arguments.', required: false, schema }),
  );
}

/** Optional query-string filters; a repeatable one has an array schema (`key=a&key=b`). */
export function ApiQueryFilters(filters: Record<string, SchemaObject>) {
  return applyDecorators(
    ...Object.entries(filters).map(([name, schema]) => {
      const { description, ...rest } = schema;
      return ApiQuery({ name, required: false, description, schema: rest });
    }),
  );
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
