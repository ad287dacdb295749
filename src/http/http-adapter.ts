import { HttpStatus } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { randomUUID } from 'node:crypto';
import { ApiError, METHOD_NOT_ALLOWED } from '../common/api-error';
import type { AppConfig } from '../config/app-config';
import { acceptableRequestId } from '../logging/redaction';
import { timeoutOptions, type TimeoutSettings } from './request-timeouts';

/** No endpoint takes more than small forms; uploads have their own streamed limit. */
export const BODY_LIMIT = 100 * 1024;

/**
 * The HTTP platform: Fastify, with the routing the API has always had (a trailing slash is
 * optional, paths match in any case, as Express did) and room for long path parameters
 * (activation keys), which Fastify would otherwise cut at 100 characters with a 404.
 */
export function createHttpAdapter(
  config: Pick<AppConfig, 'trustedProxies'> & TimeoutSettings,
): FastifyAdapter {
  return new ApiHttpAdapter({
    bodyLimit: BODY_LIMIT,
    // How long a client may take over a request, and keep an idle connection open.
    ...timeoutOptions(config),
    // request.ip (the request log, the address limits): the right-most X-Forwarded-For address
    // that is not a trusted proxy (proxy-addr), or the peer's own when no proxy is trusted.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    // The caller's X-Request-Id when it is a sane token, else a fresh one; logged with every line.
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return acceptableRequestId(incoming) ? incoming : randomUUID();
    },
    // Multipart bodies are read by src/http/multipart.ts, after each route's guards and checks.
    multipart: false,
    routerOptions: { ignoreTrailingSlash: true, caseSensitive: false, maxParamLength: 2048 },
    // A path that is not valid percent-encoding never reaches a route.
    frameworkErrors: answerFrameworkError as FastifyServerOptions['frameworkErrors'],
  });
}

function answerFrameworkError(error: { code?: string }, _request: unknown, reply: FastifyReply): void {
  const message = error.code === 'FST_ERR_BAD_URL' ? 'Malformed request path' : 'Bad request';
  void reply
    .header('Cache-Control', 'no-store')
    .code(HttpStatus.BAD_REQUEST)
    .send({ status: 'fail', message });
}

/**
 * `@All(path)` beside other routes of the same path, as Express allowed: Fastify refuses a
 * second route for a method and path, so `all` takes only the methods no route of that path
 * has taken yet (HEAD goes with GET). The 405 handlers are declared after their paths' routes.
 */
export class ApiHttpAdapter extends FastifyAdapter {
  private readonly taken = new Map<string, Set<string>>();
  private registeringCatchAll = false;
  private compiled?: Array<[RegExp, Set<string>]>;
  /** The routes the app serves, catch-alls aside: what the OpenAPI document must describe. */
  readonly servedRoutes: Array<{ method: string; url: string }> = [];

  constructor(options: FastifyServerOptions & { multipart?: false }) {
    super(options);
    this.getInstance().addHook('onRoute', (route) => {
      const methods = this.taken.get(route.url) ?? new Set<string>();
      for (const method of [route.method].flat()) {
        methods.add(method);
        if (!this.registeringCatchAll) this.servedRoutes.push({ method, url: route.url });
      }
      this.taken.set(route.url, methods);
    });
  }

  /**
   * A request no route takes: 405 with `Allow` when its path is a known one served for other
   * methods (`PUT /api/v1/login/`), else Nest's 404. Decided here, after every route had its
   * chance, so no parametric route (`GET /community-plugins/:id`) is shadowed. Catch-alls
   * (`*`, a CORS preflight's) name no path.
   */
  override setNotFoundHandler(...args: Parameters<FastifyAdapter['setNotFoundHandler']>) {
    const [handler, ...rest] = args;
    return super.setNotFoundHandler(
      ((request: FastifyRequest, reply: FastifyReply) => {
        const allow = this.allowedMethods(request.url);
        if (allow === null) return (handler as (request: unknown, reply: unknown) => unknown)(request, reply);
        return reply
          .code(HttpStatus.METHOD_NOT_ALLOWED)
          .header('Allow', allow)
          .send({ status: 'fail', message: METHOD_NOT_ALLOWED });
      }) as typeof handler,
      ...rest,
    );
  }

  private allowedMethods(url: string): string | null {
    const path = url.split('?')[0];
    const methods = new Set<string>();
    for (const [pattern, served] of this.patterns()) {
      if (pattern.test(path)) for (const method of served) methods.add(method);
    }
    if (methods.has('GET')) methods.add('HEAD');
    return methods.size === 0 ? null : [...methods].sort().join(', ');
  }

  /** Each route's path as the router matches it: any case, a trailing slash or not, `:param` one segment. */
  private patterns(): Array<[RegExp, Set<string>]> {
    this.compiled ??= [...this.taken]
      .filter(([url]) => url.startsWith('/') && url !== '/*')
      .map(([url, methods]) => {
        const source = url
          .replace(/\/+$/, '')
          .split('/')
          .map((segment) =>
            segment === '*'
              ? '.*'
              : segment.startsWith(':')
                ? '[^/]+'
                : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/');
        return [new RegExp(`^${source}/?$`, 'i'), methods] as [RegExp, Set<string>];
      });
    return this.compiled;
  }

  override all(...args: unknown[]): unknown {
    const [path, handler] = args;
    if (args.length !== 2 || typeof path !== 'string' || typeof handler !== 'function') {
      return super.all(...args);
    }
    const taken = this.taken.get(path) ?? new Set<string>();
    const free = this.getInstance().supportedMethods.filter(
      (method) => !taken.has(method) && !(method === 'HEAD' && taken.has('GET')),
    );
    this.registeringCatchAll = true;
    try {
      return this.getInstance().route({
        method: free,
        url: path,
        handler: handler as (request: FastifyRequest, reply: FastifyReply) => unknown,
      });
    } finally {
      this.registeringCatchAll = false;
    }
  }
}

/** Named in every 415: the bodies the API reads. */
export const ACCEPTED_CONTENT_TYPES =
  'application/json, application/x-www-form-urlencoded or multipart/form-data';
export const UNSUPPORTED_BODY = `Unsupported Content-Type: send the body as ${ACCEPTED_CONTENT_TYPES}`;
export const JSON_AS_FORM =
  'The body looks like JSON but was sent as application/x-www-form-urlencoded (curl -d does that): ' +
  'send it with Content-Type: application/json';

/**
 * Bodies the API reads: JSON objects and arrays (an empty body is no body, a bare string or
 * number is malformed), urlencoded forms, and multipart left to the routes that read it
 * (after their guards). A body of any other type (JSON sent as text/plain, XML) is 415
 * naming the accepted types, on every route, rather than a route's answer to an empty body.
 * So is a form whose first field name starts with `{` or `[`: what
 * `curl -d '{...}'` sends; no form the API reads has such a field.
 */
export function registerBodyParsers(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser('application/json', { bodyLimit: BODY_LIMIT }, (request, body, done) => {
    const text = Buffer.isBuffer(body) ? body.toString('utf8') : body;
    if (text.trim() === '') return done(null, undefined);
    void parseJson(request as FastifyRequest, text, (error, value) => {
      if (error) return done(error);
      if (value === null || typeof value !== 'object') {
        return done(new ApiError(HttpStatus.BAD_REQUEST, 'Malformed request body'));
      }
      done(null, value);
    });
  });
  app.useBodyParser('application/x-www-form-urlencoded', { bodyLimit: BODY_LIMIT });
  fastify.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
  // Fastify reads text/plain itself: JSON sent as text would reach the routes as a string.
  fastify.removeContentTypeParser('text/plain');
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) =>
    (body as Buffer).length === 0
      ? done(null)
      : done(new ApiError(HttpStatus.UNSUPPORTED_MEDIA_TYPE, UNSUPPORTED_BODY)),
  );
  // Handed on as an error, so the exception filter writes it in the route's envelope like the
  // parsers' errors. A callback, not an async hook: every request passes here, most with no body.
  fastify.addHook('preValidation', (request, _reply, done) => {
    if (jsonSentAsForm(request)) done(new ApiError(HttpStatus.UNSUPPORTED_MEDIA_TYPE, JSON_AS_FORM) as never);
    else done();
  });
}

function jsonSentAsForm(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  if (typeof type !== 'string' || !/^application\/x-www-form-urlencoded\b/i.test(type)) return false;
  const body = request.body;
  if (body === null || typeof body !== 'object') return false;
  const entries = Object.entries(body as Record<string, unknown>);
  return entries.length > 0 && /^\s*[[{]/.test(entries[0][0]);
}

/** Every answer names its request, so a client's report can be found in the log. */
export function echoRequestId(app: NestFastifyApplication): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
      reply.header('X-Request-Id', request.id);
      done();
    });
}

/**
 * Answers carry tokens, source code and personal data; no cache, shared or private, keeps one,
 * unless the route says how its answer may be kept (the marketplace's conditional answers and
 * files by digest): those set Cache-Control themselves, on success only.
 */
export function forbidCaching(app: NestFastifyApplication): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
      if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
      done(null, payload);
    });
}
