import Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { buildOpenApiDocument } from '../../src/openapi/openapi';

/*
 * Every answer of an e2e test app checked against the OpenAPI document the app serves: its
 * status must be declared by the operation, and its body must match that status's schema.
 * The check runs in a Fastify onSend hook, so it sees what goes on the wire (the exception
 * filter's answers and the plugin views included) and knows the route Fastify matched,
 * without matching paths again; a test setup file fails the test that made a mismatch
 * (test/openapi-responses.setup.ts). Answers of routes outside the document (pages, docs,
 * unknown paths, the 405 catch-alls) are not checked.
 */

interface Operation {
  operationId: string;
  responses: Record<
    string,
    { content?: Record<string, { schema: object }>; headers?: Record<string, { required?: boolean }> }
  >;
}
type Document = { paths: Record<string, Record<string, Operation>> };

const mismatches: string[] = [];

/** The mismatches recorded since the last call, emptied. */
export function takeOpenApiMismatches(): string[] {
  return mismatches.splice(0, mismatches.length);
}

/** One compiled checker per distinct document (the test apps of a run mostly serve the same one). */
const checkers = new Map<string, ResponseChecker>();

export class ResponseChecker {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, discriminator: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: Document) {
    addFormats(this.ajv);
    // OpenAPI 3.0 `nullable` and `example` are no JSON Schema keywords.
    this.ajv.addKeyword({ keyword: 'example' });
    this.ajv.addSchema(document as object, 'openapi');
  }

  /** Null when the answer matches, else what does not, naming the operation, status and path. */
  check(
    method: string,
    routeUrl: string,
    status: number,
    headers: Record<string, unknown>,
    payload: string,
  ): string | null {
    const path = routeUrl.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1');
    const operation = this.document.paths[path]?.[method];
    if (!operation) return null;
    const where = `${method.toUpperCase()} ${path} (${operation.operationId}) answered ${status}`;
    const response = operation.responses[String(status)];
    if (!response) {
      const declared = Object.keys(operation.responses).join(', ');
      return `${where}, a status the document does not declare (declared: ${declared}); body: ${clip(payload)}`;
    }
    const missing = Object.entries(response.headers ?? {})
      .filter(([name, header]) => header.required && headers[name.toLowerCase()] === undefined)
      .map(([name]) => name);
    if (missing.length > 0) return `${where} without the header ${missing.join(', ')}`;
    const contentType = String(headers['content-type'] ?? '');
    const media = response.content?.['application/json'];
    if (!media) return payload === '' ? null : `${where} with a body the document declares none for`;
    if (!contentType.startsWith('application/json')) return `${where} as ${contentType || 'no content type'}`;
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      return `${where} with a body that is not JSON: ${clip(payload)}`;
    }
    const validate = this.validator(path, method, status);
    if (validate(body)) return null;
    const errors = (validate.errors ?? [])
      .map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`)
      .join('; ');
    return `${where}: ${errors}; body: ${clip(payload)}`;
  }

  private validator(path: string, method: string, status: number): ValidateFunction {
    const pointer = [
      'paths',
      path,
      method,
      'responses',
      String(status),
      'content',
      'application/json',
      'schema',
    ]
      .map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1'))
      .join('/');
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi#/${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }
}

const clip = (text: string): string => (text.length > 300 ? `${text.slice(0, 300)}...` : text);

/** Checks every answer of `app` from now on; mismatches go to takeOpenApiMismatches(). */
export function checkAnswersAgainstOpenApi(app: NestFastifyApplication): void {
  let checker: ResponseChecker | undefined;
  const checkerOf = (): ResponseChecker => {
    if (!checker) {
      const document = buildOpenApiDocument(app);
      const key = JSON.stringify(document);
      checker = checkers.get(key) ?? new ResponseChecker(JSON.parse(key) as Document);
      checkers.set(key, checker);
    }
    return checker;
  };
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
      const url = request.routeOptions.url;
      if (url && request.method !== 'HEAD' && (typeof payload === 'string' || payload == null)) {
        const method = request.method.toLowerCase();
        try {
          const mismatch = checkerOf().check(
            method,
            url,
            reply.statusCode,
            reply.getHeaders(),
            payload ?? '',
          );
          if (mismatch) mismatches.push(mismatch);
        } catch (error) {
          // A schema that cannot be compiled is the document's fault, not the answer's.
          mismatches.push(`${method.toUpperCase()} ${url}: its schema cannot be checked: ${String(error)}`);
        }
      }
      done(null, payload);
    });
}
