/** Account endpoints answer HTTP 200 with status and message, success or not. */
export interface AccountResponse {
  status: 'success' | 'fail';
  message: unknown;
  [extra: string]: unknown;
}

export const accountSuccess = (message: unknown, extra: Record<string, unknown> = {}): AccountResponse => ({
  status: 'success',
  message,
  ...extra,
});

export const accountFail = (message: string): AccountResponse => ({ status: 'fail', message });

/** Everything else answers with data. */
export const success = <T>(data: T): { status: 'success'; data: T } => ({ status: 'success', data });
