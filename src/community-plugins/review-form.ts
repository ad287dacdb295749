import type { FastifyRequest } from 'fastify';
import type { MultipartRules } from '../http/multipart';

/** Enough for a 2000-character reason in any script, and nothing else of size. */
export const REVIEW_FORM: MultipartRules = { fields: 8, fieldSize: 16 * 1024, parts: 8 };

/**
 * A text argument from the body, else the query string. Unlike the account endpoints'
 * reader it does not cut long values: the caller checks the length and says so.
 */
export function readText(request: FastifyRequest, name: string): string | undefined {
  const body: unknown = request.body;
  const fromBody = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return asText(fromBody) ?? asText((request.query as Record<string, unknown>)[name]);
}

function asText(value: unknown): string | undefined {
  if (Array.isArray(value)) return asText(value[0]);
  return typeof value === 'string' ? value : undefined;
}
