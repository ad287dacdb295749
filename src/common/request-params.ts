import type { Request } from 'express';

/** Longer inputs are never legitimate here and would only feed slow regular expressions. */
const MAX_PARAM_LENGTH = 1024;

/**
 * A request argument as the spec reads it: from the body (JSON, urlencoded or multipart
 * fields) or else from the query string. Only text counts; a repeated argument gives its
 * first value, and anything that is not text is treated as absent.
 */
export function readParam(request: Request, name: string): string | undefined {
  const body: unknown = request.body;
  const fromBody = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  const query = request.query as Record<string, unknown>;
  return asText(fromBody) ?? asText(query[name]);
}

function asText(value: unknown): string | undefined {
  if (Array.isArray(value)) return asText(value[0]);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'string') return undefined;
  return value.length > MAX_PARAM_LENGTH ? value.slice(0, MAX_PARAM_LENGTH + 1) : value;
}

/** The spec's "missing": absent, or empty. */
export function isMissing(value: string | undefined): value is undefined | '' {
  return value === undefined || value === '';
}
