import type { FastifyRequest as Request } from 'fastify';

/**
 * Request arguments as the spec reads them: from the body (JSON, urlencoded or multipart
 * fields) or else from the query string. Only text counts; anything else is treated as absent.
 */

/** Every text value of a repeatable argument: the body's values if it has any, else the query's. */
export function readParamValues(request: Request, name: string): string[] {
  const body: unknown = request.body;
  const fromBody =
    body && typeof body === 'object' ? textValues((body as Record<string, unknown>)[name]) : [];
  if (fromBody.length > 0) return fromBody;
  return textValues((request.query as Record<string, unknown>)[name]);
}

/** The first value of an argument. Never shortened: callers refuse what is too long. */
export function readParam(request: Request, name: string): string | undefined {
  return readParamValues(request, name)[0];
}

function textValues(value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  return values.flatMap((item) => {
    if (typeof item === 'string') return [item];
    if (typeof item === 'number' || typeof item === 'boolean') return [String(item)];
    return [];
  });
}

/** The spec's "missing": absent, or empty. */
export function isMissing(value: string | undefined): value is undefined | '' {
  return value === undefined || value === '';
}

/**
 * A boolean argument: `true`/`false` or `1`/`0`, any case. Absent or empty is `undefined`;
 * anything else is `null`, which the caller turns into a 400.
 */
export function parseFlag(raw: string | undefined): boolean | undefined | null {
  if (raw === undefined || raw === '') return undefined;
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return null;
}

/** The largest id an INTEGER column holds on both databases (MySQL's signed INT). */
export const MAX_ID = 2_147_483_647;

/** A row id as it appears in a path or an argument: plain decimal digits, 1 to MAX_ID; else `null`. */
export function parseId(raw: string | undefined): number | null {
  if (raw === undefined || !/^[0-9]{1,10}$/.test(raw)) return null;
  const id = Number(raw);
  return id >= 1 && id <= MAX_ID ? id : null;
}
