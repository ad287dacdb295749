/**
 * Account endpoints answer HTTP 200 with status and message, success or not. The contract's
 * members stay at the top; `data` repeats them (and any extra member, such as `email` of
 * `Link Expired`), because the original framework's web client reads every account answer
 * as `data.status` and `data.message` (its server wrapped them so).
 */
export interface AccountResponse {
  status: 'success' | 'fail';
  message: unknown;
  data: { status: 'success' | 'fail'; message: unknown; [extra: string]: unknown };
  [extra: string]: unknown;
}

function accountResponse(
  status: 'success' | 'fail',
  message: unknown,
  extra: Record<string, unknown>,
): AccountResponse {
  return { status, message, ...extra, data: { status, message, ...extra } };
}

export const accountSuccess = (message: unknown, extra: Record<string, unknown> = {}): AccountResponse =>
  accountResponse('success', message, extra);

export const accountFail = (message: string): AccountResponse => accountResponse('fail', message, {});

/** Everything else answers with data. */
export const success = <T>(data: T): { status: 'success'; data: T } => ({ status: 'success', data });
