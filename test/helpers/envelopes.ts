import type { Response } from 'supertest';

/** The error envelope: `errors` only where the answer lists several findings. */
export const fail = (message: string, errors?: unknown) =>
  errors === undefined ? { status: 'fail', message } : { status: 'fail', message, errors };

/**
 * The answers of the account endpoints: the contract's `status` and `message` (and `email`
 * of `Link Expired`) at the top, and the same members again under `data`, which is what the
 * original web client reads.
 */
export const accountAnswer = (status: 'success' | 'fail', message: unknown, extra: object = {}) => ({
  status,
  message,
  ...extra,
  data: { status, message, ...extra },
});

/** An account endpoint's success. */
export const okMessage = (message: unknown, extra: object = {}) => accountAnswer('success', message, extra);

/** An account endpoint's failure: HTTP 200 with status `fail`. */
export const accountFail = (message: string) => accountAnswer('fail', message);

/** The success envelope of every other endpoint. */
export const okData = (data: unknown) => ({ status: 'success', data });

/** Status and body compared together, so that a failure shows both. */
export function expectFail(response: Response, status: number, message: string): void {
  expect([response.status, response.body]).toEqual([status, fail(message)]);
}
