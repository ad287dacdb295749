/**
 * What a personal access token may do: `read` (GET routes), `upload` (uploads and new
 * versions), `review` (admin routes, for an admin). See src/auth/jwt-auth.guard.ts.
 */
export const TOKEN_SCOPES = ['read', 'upload', 'review'] as const;
export type AccessScope = (typeof TOKEN_SCOPES)[number];

/** The recognisable start of every token's secret, for secret scanners. */
export const ACCESS_TOKEN_PREFIX = 'svcpat_';

/** The 403s of a personal access token on a route it may not call (see JwtAuthGuard). */
export const TOKEN_REFUSED = 'This route does not accept access tokens';
export const TOKEN_MANAGEMENT_REFUSED =
  'An access token cannot manage access tokens, the password or the second factor';
export const lacksScope = (scope: AccessScope | '<scope>') => `This token lacks the ${scope} scope`;

/** The admin guard's 403 under ADMIN_SECOND_FACTOR=required, until the admin's TOTP is on. */
export const ADMIN_NEEDS_SECOND_FACTOR =
  'Admin routes need a second factor: enrol one with POST /api/v1/account/totp';
