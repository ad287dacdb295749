/**
 * Request arguments as the spec reads them: from the body (JSON, urlencoded or multipart
 * fields) or else from the query string. Written against `body` and `query` alone, so it
 * reads the same on any HTTP adapter.
 */

/** The two places a request carries arguments in. */
export interface ArgumentSource {
  body?: unknown;
  query?: unknown;
}

/** Values of one argument, a repeated one flattened; nothing is converted yet. */
export type RequestArguments = Record<string, unknown[]>;

const isText = (item: unknown): item is string | number | boolean =>
  typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean';

const valuesOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

function ownEntries(source: unknown): Array<[string, unknown]> {
  return source && typeof source === 'object' && !Array.isArray(source)
    ? Object.entries(source as Record<string, unknown>)
    : [];
}

/**
 * Every argument of the request: for each name the body's values when the body holds text
 * under it, else the query's. The object has no prototype, so no argument name reaches one.
 */
export function requestArguments(request: ArgumentSource): RequestArguments {
  const merged: RequestArguments = Object.create(null) as RequestArguments;
  for (const [name, value] of ownEntries(request.query)) merged[name] = valuesOf(value);
  for (const [name, value] of ownEntries(request.body)) {
    const values = valuesOf(value);
    if (values.some(isText)) merged[name] = values;
  }
  return merged;
}

/** The text values among an argument's values; numbers and booleans of a JSON body count, as text. */
export function textValues(values: unknown): string[] {
  return valuesOf(values).flatMap((item) => (isText(item) ? [String(item)] : []));
}

/** Every text value of a repeatable argument: the body's values if it has any, else the query's. */
export function readParamValues(request: ArgumentSource, name: string): string[] {
  const values = requestArguments(request)[name];
  return values === undefined ? [] : textValues(values);
}

/** The first value of an argument. Never shortened: callers refuse what is too long. */
export function readParam(request: ArgumentSource, name: string): string | undefined {
  return readParamValues(request, name)[0];
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

/**
 * A row id as it appears in a path or an argument: decimal digits without a leading zero,
 * 1 to MAX_ID; else `null`. One spelling per id: the marketplace's tests refuse `01`, so
 * `/sessions/007` names no session either, and an id is never found under two paths.
 */
export function parseId(raw: string | undefined): number | null {
  if (raw === undefined || !/^[1-9][0-9]{0,9}$/.test(raw)) return null;
  const id = Number(raw);
  return id <= MAX_ID ? id : null;
}
