/** The spec's messages of the session endpoints, letter for letter. */
export const SESSION_MESSAGES = {
  incorrectParameters: 'Incorrect query parameters',
  invalidSessionId: 'Invalid session id provided',
  invalidParameterType: 'Invalid parameter type provided',
  invalidTargetReference: 'Invalid target reference provided',
  actionMustBeNone: 'Action must be None',
  databaseFailure: 'An unknown exception occurred when performing a DB operation',
} as const;

export const SESSION_NAME_MAX = 50;

export type SessionAction = 'add' | 'remove' | 'activate';

export function parseAction(raw: string | undefined): SessionAction | null {
  return raw === 'add' || raw === 'remove' || raw === 'activate' ? raw : null;
}

/**
 * A session name: surrounding white space is dropped, the rest must be 1 to 50 characters
 * (code points, as MySQL counts them) without control characters. Null when it is not.
 */
export function parseSessionName(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const name = raw.trim();
  const length = [...name].length;
  // eslint-disable-next-line no-control-regex
  if (length < 1 || length > SESSION_NAME_MAX || /[\u0000-\u001f\u007f]/.test(name)) return null;
  return name;
}
