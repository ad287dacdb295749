import { ADMIN_NEEDS_SECOND_FACTOR } from '../common/access-scopes';

/** The answers of the second factor, stated once (docs/accounts-security.md lists them). */
export const SECOND_FACTOR_MESSAGES = {
  /** Login of an enrolled user whose password was right: the one answer for a missing or wrong code. */
  loginRefused: 'Invalid or missing second factor code',
  /** ADMIN_SECOND_FACTOR=required, on every admin route, until the admin's TOTP is confirmed. */
  adminNeedsEnrolment: ADMIN_NEEDS_SECOND_FACTOR,
  alreadyOn: 'A second factor is already on: turn it off first',
  nothingPending: 'No second factor is waiting for confirmation: start with POST /api/v1/account/totp',
  replaced: 'The secret waiting for confirmation was replaced: confirm the newest one',
  notOn: 'No second factor is on',
  invalidCode: 'Invalid one-time code',
} as const;
