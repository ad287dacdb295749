import type { Response } from 'supertest';

/** The error envelope: `errors` only where the answer lists several findings. */
export const fail = (message: string, errors?: unknown) =>
  errors === undefined ? { status: 'fail', message } : { status: 'fail', message, errors };

/** The success envelope of the account endpoints, which answer with a message. */
export const okMessage = (message: unknown) => ({ status: 'success', message });

/** The success envelope of every other endpoint. */
export const okData = (data: unknown) => ({ status: 'success', data });

/** Status and body compared together, so that a failure shows both. */
export function expectFail(response: Response, status: number, message: string): void {
  expect([response.status, response.body]).toEqual([status, fail(message)]);
}
