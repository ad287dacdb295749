/** Names of values that must never reach a log line, wherever they appear. */
export const SECRET_KEYS = [
  'password',
  'confirm_password',
  'otp',
  'token',
  'jwt-token',
  'otp_secret_key',
  'otpSecretKey',
  'secret',
  'authorization',
  'cookie',
];

export const CENSOR = '[Redacted]';

/** pino redact paths: headers, and secret keys at the top of a logged object and one or two levels down. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  ...SECRET_KEYS.flatMap((key) => [`["${key}"]`, `*["${key}"]`, `*.*["${key}"]`]),
];

/**
 * Query parameters whose value is redacted: the secret keys, and any name that looks like it
 * carries a credential (`access_token`, `jwt`, `apiKey`, `session_id`, `code`, ...). Redacting
 * a harmless parameter by mistake costs a log detail; missing a token would leak it.
 */
const SECRET_PARAM_NAME = new RegExp(
  [...SECRET_KEYS, 'token', 'jwt', 'key', 'code', 'session', 'auth', 'signature', 'sig', 'credential']
    .map((name) => name.replace(/[-_]/g, '[-_]?'))
    .join('|'),
  'i',
);
const QUERY_PARAM = /([?&])([^=&#]*)(=?)([^&#]*)/g;
/**
 * The activation key in the path (the API's, or the pages' the mail links, to confirm or to
 * claim the address) is as good as a
 * password until it is used. Matched on the decoded path, as the router reads it:
 * `/api/v1/verify/confirm%5Femail/<key>` and `/email%2Dverify/<key>` reach the same handlers.
 */
const SECRET_PATH = /(\/(?:verify\/(?:confirm|claim)_email|email-(?:verify|claim))\/).*/is;

/** A request URL as it may be logged: secret query values and the activation key replaced. */
export function redactUrl(url: string): string {
  const hash = url.indexOf('#');
  const [head, fragment] = hash < 0 ? [url, ''] : [url.slice(0, hash), url.slice(hash)];
  const query = head.indexOf('?');
  const rawPath = query < 0 ? head : head.slice(0, query);
  const decoded = decodePath(rawPath).replace(/\/{2,}/g, '/');
  // Only a path with a secret is logged decoded: the others keep their bytes as sent.
  const path = SECRET_PATH.test(decoded) ? decoded.replace(SECRET_PATH, `$1${CENSOR}`) : rawPath;
  const search = query < 0 ? '' : head.slice(query).replace(QUERY_PARAM, redactParam);
  return path + search + fragment;
}

function redactParam(whole: string, separator: string, name: string, equals: string): string {
  if (!equals || !SECRET_PARAM_NAME.test(safeDecode(name))) return whole;
  return `${separator}${name}=${CENSOR}`;
}

/** Decoded until stable (a few rounds at most), so no spelling of a path hides its secret. */
function decodePath(path: string): string {
  let current = path;
  for (let round = 0; round < 4; round += 1) {
    const next = safeDecode(current.replace(/\+/g, '%2B'));
    if (next === current) break;
    current = next;
  }
  return current;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** A client's X-Request-Id is kept only when it is short and plain, so it cannot forge log lines. */
export function acceptableRequestId(value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID.test(value);
}
