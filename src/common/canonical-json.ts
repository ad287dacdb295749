/**
 * Canonical JSON: keys sorted at every level, no spaces, and every character outside printable ASCII (DEL included)
 * written as a `\uXXXX` escape. That is exactly Python's
 * `json.dumps(value, sort_keys=True, separators=(",", ":"))` (ensure_ascii is its default), so
 * a verifier in the framework rebuilds the same bytes with the standard library.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}
