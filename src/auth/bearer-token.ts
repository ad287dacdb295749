import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The token is the second whitespace-separated part of the Authorization header; the
 * scheme word must be `Bearer` (any case).
 */
export function bearerToken(request: { headers: IncomingHttpHeaders }): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const [scheme, token, ...rest] = header.trim().split(/\s+/);
  if (rest.length > 0 || !token || scheme.toLowerCase() !== 'bearer') return null;
  return token;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
