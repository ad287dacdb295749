import { HttpStatus } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { acceptableRequestId } from '../logging/redaction';

/** No endpoint takes more than small forms; uploads have their own streamed limit. */
export const BODY_LIMIT = 100 * 1024;

/**
 * The HTTP platform: Fastify, with the routing the API has always had (a trailing slash is
 * optional, paths match in any case, as Express did) and room for long path parameters
 * (activation keys), which Fastify would otherwise cut at 100 characters with a 404.
 */
export function createHttpAdapter(): FastifyAdapter {
  return new ApiHttpAdapter({
    bodyLimit: BODY_LIMIT,
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

/**
 * Bodies as the API has always read them: JSON objects and arrays (an empty body is no body,
 * a bare string or number is malformed), urlencoded forms, multipart left to the routes that
 * read it (after their guards), and any other type read up to the limit and ignored, so a
 * client with an odd Content-Type gets the route's own answer, not a 415.
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
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, _body, done) =>
    done(null),
  );
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

/** Answers carry tokens, source code and personal data; no cache, shared or private, keeps one. */
export function forbidCaching(app: NestFastifyApplication): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
      reply.header('Cache-Control', 'no-store');
      done(null, payload);
    });
}
