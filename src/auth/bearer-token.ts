import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The token is the second whitespace-separated part of the Authorization header, whatever
 * the scheme word before it (the spec's rule: `Bearer`, `JWT` and the like all work).
 * `'no-scheme'` is a header of one part, a token sent bare, which gets its own message.
 */
export function bearerToken(request: { headers: IncomingHttpHeaders }): string | 'no-scheme' | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const parts = header.trim().split(/\s+/);
  if (parts.length === 1 && parts[0] !== '') return 'no-scheme';
  const [, token, ...rest] = parts;
  if (rest.length > 0 || !token) return null;
  return token;
}

/** The 401 message for a token sent without a scheme word. */
export const NO_SCHEME = 'Authorization header must be "Bearer <token>"';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
