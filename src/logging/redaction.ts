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

const SECRET_QUERY = new RegExp(`([?&](?:${SECRET_KEYS.join('|')})=)[^&#]*`, 'gi');
/** The activation key in the path is as good as a password until it is used. */
const SECRET_PATH = /(\/verify\/confirm_email\/)[^/?#]+/i;

/** A request URL as it may be logged: secret query values and the activation key replaced. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, `$1${CENSOR}`).replace(SECRET_PATH, `$1${CENSOR}`);
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** A client's X-Request-Id is kept only when it is short and plain, so it cannot forge log lines. */
export function acceptableRequestId(value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID.test(value);
}
