import {
  All,
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  Header,
  HttpCode,
  Options,
  SetMetadata,
  Type,
} from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import {
  ApiExcludeEndpoint,
  ApiExtension,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import type { HeaderObject, SchemaObject } from '@nestjs/swagger';
import {
  AccountResponseBody,
  ApiArgsBody,
  ApiArgsQuery,
  ApiDataResponse,
  ApiFailMessages,
  ApiOptionsEndpoint,
  ApiPublic,
  TOKEN_SCOPE_EXTENSION,
  DataSpec,
  FailMessages,
  RATE_LIMIT_HEADERS,
  withGuards,
} from '../openapi/api-docs';

import { type AccessScope, TOKEN_REFUSED } from './access-scopes';

export const IS_PUBLIC = 'svc:isPublic';
export const IS_ADMIN_ONLY = 'svc:isAdminOnly';
export const MISSING_TOKEN_IS_BAD_REQUEST = 'svc:missingTokenIsBadRequest';
export const ANONYMOUS_READS = 'svc:anonymousReads';
export const TOKEN_SCOPE = 'svc:tokenScope';

/**
 * The scope a personal access token needs on the route. Without it the guard's rule decides:
 * admin routes `review`, other GET routes `read`, anything else refuses tokens.
 */
export const NeedsScope = (scope: AccessScope) =>
  applyDecorators(SetMetadata(TOKEN_SCOPE, scope), ApiExtension(TOKEN_SCOPE_EXTENSION, scope));

/** The route (or controller) takes no personal access token, whatever its method: 403 with `message`. */
export const AccessTokensRefused = (message: string = TOKEN_REFUSED) =>
  applyDecorators(
    SetMetadata(TOKEN_SCOPE, { refused: message }),
    ApiExtension(TOKEN_SCOPE_EXTENSION, 'none'),
  );

/** The route needs no token. Every other route does (deny by default). */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiPublic());

/**
 * A request without an Authorization header may read the route when PLUGIN_ANONYMOUS_READS is
 * on (a public marketplace); a token that is sent is checked as anywhere else.
 */
export const AnonymousReads = () => SetMetadata(ANONYMOUS_READS, true);

/** The route needs a token of an admin. */
export const AdminOnly = () => SetMetadata(IS_ADMIN_ONLY, true);

/** The spec answers a missing Authorization header with 400 `Invalid Token` on logout. */
export const MissingTokenIsBadRequest = () => SetMetadata(MISSING_TOKEN_IS_BAD_REQUEST, true);

/** The authenticated caller, as the JWT guard put it on the request. */
export interface AuthUser {
  id: number;
  name: string;
  email: string;
  isAdmin: boolean;
  /**
   * An admin by role who holds no admin power yet: ADMIN_SECOND_FACTOR=required and no
   * second factor on (isAdmin is then false; the admin guard tells them to enrol).
   */
  awaitsSecondFactor?: true;
  /** SHA-256 of the presented token, the key of its login record. */
  tokenHash: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the JWT guard on authenticated routes. */
    user?: AuthUser;
  }
}

export const CurrentUser = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<{ user?: AuthUser }>();
  return request.user;
});

/**
 * A spec account endpoint: public (or, for logout, `token: true`), HTTP 200 with
 * `{status, message}` for success and failure alike, the spec's messages listed.
 */
/** Route config flag of the account endpoints (see envelopes.ts). */
export const ACCOUNT_ANSWERS = 'accountAnswers';

export function AccountEndpoint(options: {
  summary: string;
  messages: string[];
  /** The DTO class of its `@Args()`. */
  args?: Type<unknown>;
  /** Behind the account rate limits: 429, and 503 when their store does not answer. */
  rateLimited?: boolean;
  /** Needs the token it acts on; a missing Authorization header is a 400 `Invalid Token`. */
  token?: true;
  /** The 200 answer's schema when it is not the plain AccountResponse (login's token). */
  answer?: { schema: SchemaObject; models: Array<Type<unknown>> };
}) {
  const fails: FailMessages = {};
  if (options.token)
    Object.assign(fails, {
      400: ['Invalid Token'],
      401: ['Unauthorized', 'Authorization header must be "Bearer <token>"'],
      403: [TOKEN_REFUSED],
    });
  if (options.rateLimited) Object.assign(fails, { 429: ['Too many requests'], 503: ['Service unavailable'] });
  const headers = options.rateLimited ? RATE_LIMIT_HEADERS : undefined;
  return applyDecorators(
    options.token ? MissingTokenIsBadRequest() : Public(),
    // Read by the exception filter from the Fastify route: its refusals carry `data` too.
    RouteConfig({ [ACCOUNT_ANSWERS]: true }),
    HttpCode(200),
    ApiOperation({
      summary: options.summary,
      description: `Messages: ${options.messages.map((message) => `\`${message}\``).join(', ')}.`,
    }),
    ...(options.answer
      ? [
          ApiExtraModels(...options.answer.models),
          ApiOkResponse({
            description: 'Success or failure, told by `status`',
            schema: options.answer.schema,
            headers,
          }),
        ]
      : [
          ApiExtraModels(AccountResponseBody),
          ApiOkResponse({
            description: 'Success or failure, told by `status`',
            type: AccountResponseBody,
            headers,
          }),
        ]),
    ...(options.args ? [ApiArgsBody(options.args)] : []),
    ApiFailMessages(fails, { rateLimitHeaders: options.rateLimited }),
  );
}

export interface RouteOptions {
  summary: string;
  description?: string;
  /** What `data` holds on success; leave it out for a path shape the route only refuses. */
  data?: DataSpec;
  /** 201 for creations, 202 for work started; the status served and the one documented. */
  status?: 200 | 201 | 202;
  /** The operation's own fail messages by status; 401 (and 403) come from the access rule. */
  fails?: FailMessages;
  /** The DTO class of an `@Args()` read from the body (or the query string). */
  args?: Type<unknown>;
  /** The DTO class of an `@Args()` read from the query string of a GET. */
  query?: Type<unknown>;
  /** Headers of the success answer, e.g. a list's total count. */
  headers?: Record<string, HeaderObject>;
}

/**
 * A `{status: 'success', data}` route behind the bearer token, in the style of
 * `@Authenticated({ admin })`: the access rule and its documentation are one decorator.
 */
export function Authenticated(options: RouteOptions & { admin?: boolean }) {
  const access = options.admin ? 'admin' : 'user';
  const decorators = [
    ApiOperation({ summary: options.summary, description: options.description }),
    ApiFailMessages(withGuards(access, options.fails)),
  ];
  if (options.admin) decorators.push(AdminOnly());
  if (options.data !== undefined) {
    decorators.push(
      HttpCode(options.status ?? 200),
      ApiDataResponse(options.status ?? 200, options.data, options.headers),
    );
  }
  if (options.args) decorators.push(ApiArgsBody(options.args));
  if (options.query) decorators.push(ApiArgsQuery(options.query));
  return applyDecorators(...decorators);
}

/** A route for admins only: 403 `Admin privileges required` for everyone else. */
export const AdminRoute = (options: RouteOptions) => Authenticated({ ...options, admin: true });

/** OPTIONS on `path`: public, since a CORS preflight carries no token; 204 with `Allow`. */
export const OptionsRoute = (path: string | string[], allow: string) =>
  applyDecorators(ApiOptionsEndpoint(allow), Options(path), Public(), HttpCode(204), Header('Allow', allow));

/**
 * Every other method on `path`: the handler throws `methodNotAllowed`. Which methods exist
 * is no secret, so it is told before any token check, as a router would.
 */
export const UnsupportedMethods = (path: string | string[]) =>
  applyDecorators(ApiExcludeEndpoint(), All(path), Public());
