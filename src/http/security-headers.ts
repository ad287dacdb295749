import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The API speaks plain HTTP unless a proxy adds TLS; upgrading the docs page's own requests to
 * https would break the Swagger UI there.
 */
export const HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};

/**
 * The headers helmet sets, worked out once. Our options hold no per-request part (no nonces),
 * so every answer gets the same set; @fastify/helmet would instead build a new helmet
 * middleware, policy parsing included, for every request.
 */
export function helmetHeaders(options: HelmetOptions = HELMET_OPTIONS): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let failure: unknown;
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    failure = error;
  });
  if (failure) throw failure;
  return headers;
}

/** Security headers on every answer, errors and 404s included. */
export function applySecurityHeaders(app: NestFastifyApplication): void {
  const headers = helmetHeaders();
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (_request: FastifyRequest, reply: FastifyReply, done) => {
      reply.headers(headers);
      done();
    });
}
