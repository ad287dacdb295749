import { createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';

export type JwtAlgorithm = 'HS256' | 'HS384' | 'HS512';

export type DatabaseConfig =
  | { type: 'sqlite'; path: string }
  | { type: 'mysql'; host: string; port: number; username: string; password: string; database: string };

export interface SmtpConfig {
  host: string;
  port: number;
  user?: string;
  password?: string;
  secure: boolean;
}

export interface AppConfig {
  production: boolean;
  port: number;
  host: string;
  database: DatabaseConfig;
  /**
   * Each query's deadline, and a new connection's: past it the connection is dropped and the
   * request answers 503 (migrations are exempt).
   */
  databaseQueryTimeoutMs: number;
  /** How long a start keeps trying to reach the database before it gives up. */
  databaseStartupWaitMs: number;
  /** How long requests in flight at SIGTERM get to finish. */
  shutdownGraceMs: number;
  /**
   * How long a replica keeps serving after SIGTERM with its readiness down, so a balancer
   * that health-checks /health/ready takes it out of the pool before it stops accepting.
   */
  shutdownDrainMs: number;
  jwt: { secret: string; algorithm: JwtAlgorithm; expiresInSeconds: number };
  /** Without SMTP the text of every mail goes to the log and stdout. */
  smtp: SmtpConfig | null;
  mailFrom: string;
  /** Host of the links in mail (`http://<serverAddr>:<frontendPort>/email-verify/<key>`). */
  serverAddr: string;
  /** Port of the links in mail: FRONTEND_PORT, else PORT; 0 (PORT=0) is the port the API got. */
  frontendPort: number;
  /** FRONTEND_URL: the base of the links in mail instead of serverAddr and frontendPort. */
  frontendUrl: string | null;
  emailPattern: RegExp;
  passwordPattern: RegExp;
  bcryptCost: number;
  /**
   * `keep`: confirming an address keeps the password chosen at registration, and the mail
   * offers the owner a claim link instead (see docs/accounts-security.md); `claim`: every
   * confirmation is a claim (clears that password; the owner sets one through the OTP mail).
   */
  accountConfirmation: AccountConfirmation;
  adminEmails: string[];
  communityPluginDir: string;
  pluginUploadMaxSize: number;
  /** Upload attempts per user per hour (off with RATE_LIMIT=off). */
  pluginUploadsPerHour: number;
  /** Plugins one user may have waiting for review. */
  pluginMaxPendingPerUser: number;
  /** Threads that compute reviewers' diffs off the event loop. */
  pluginDiffThreads: number;
  /** Diffs that may wait for a thread; past it a diff answers 503 with Retry-After. */
  pluginDiffMaxQueued: number;
  /** Below this many free bytes in the plugin directory, readiness reports it down. */
  pluginDirMinFreeBytes: number;
  /** How often plugin files and rows are reconciled after the one at start-up; 0: only at start-up. */
  pluginReconcileIntervalSeconds: number;
  /**
   * A plugin file without a row (or a leftover temporary file) is removed once older than
   * this, so another replica's upload between its write and its commit is never touched.
   */
  pluginFileGraceSeconds: number;
  /** Targets one user may have (409 past it): one user must not be able to fill the database. */
  maxTargetsPerUser: number;
  /** Sessions one user may have (409 past it). */
  maxSessionsPerUser: number;
  /** PKCS#8 PEM of the Ed25519 key that signs the plugin manifest. */
  pluginManifestKey: string;
  /** How long a signed manifest is valid after it is issued: a loader refuses it past `expires_at`. */
  pluginManifestTtlSeconds: number;
  /** Distinct admins, none of them the uploader, who must approve a version before it is approved. */
  pluginApprovalsRequired: number;
  /** `forbidden`: an admin may not review a version they uploaded (see docs/plugin-lifecycle.md). */
  pluginSelfReview: PluginSelfReview;
  rateLimit: boolean;
  /** Shared limit counters for every replica; null keeps them in the process. */
  redisUrl: string | null;
  /**
   * Addresses and CIDR ranges of the proxies whose `X-Forwarded-For` is believed: the client's
   * address is the right-most one not among them. Empty: the peer's own address.
   */
  trustedProxies: string[];
  /**
   * How long a client may take over a request's headers, counted from its connection or from
   * the request's first byte (see docs/security.md#connections).
   */
  httpHeadersTimeoutMs: number;
  /** How long a client may take to send a whole request, headers and body. */
  httpRequestTimeoutMs: number;
  /** How long a kept-alive connection may wait, idle, for its next request. */
  httpKeepAliveTimeoutMs: number;
  /**
   * Connections one peer address may have open at once, 0 for no cap; the trusted proxies'
   * own addresses are never capped.
   */
  httpConnectionsPerAddress: number;
  logLevel: LogLevel;
  /** JSON lines (for collectors), or readable lines for a person at a terminal. */
  logFormat: LogFormat;
  /** Origins allowed by CORS; empty turns CORS off. */
  corsOrigins: string[];
  /** The reviewers' test-run jail (docs/plugin-test-run.md). */
  pluginTestRun: PluginTestRunConfig;
}

export interface PluginTestRunConfig {
  bwrapPath: string;
  pythonPath: string;
  cpuSeconds: number;
  wallSeconds: number;
  addressSpaceBytes: number;
  fileSizeBytes: number;
  processes: number;
  /** Runs waiting for a free core; past it a run is refused with 503. */
  queueLength: number;
}

export const ACCOUNT_CONFIRMATION = ['keep', 'claim'] as const;
export type AccountConfirmation = (typeof ACCOUNT_CONFIRMATION)[number];

export const PLUGIN_SELF_REVIEW = ['forbidden', 'allowed'] as const;
export type PluginSelfReview = (typeof PLUGIN_SELF_REVIEW)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Ordinary addresses: a dot-separated local part and a domain with a TLD of 2+ letters. */
export const DEFAULT_EMAIL_PATTERN =
  "^(?=.{3,254}$)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$";
/** 8 to 64 characters with a lower-case letter, an upper-case letter, a digit and a symbol. */
export const DEFAULT_PASSWORD_PATTERN =
  '^(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9])(?=.*[^A-Za-z0-9])[^\\x00-\\x1f\\x7f]{8,64}$';

const DEFAULT_DATA_DIR = 'data';

/** Where the data lives without DATABASE_URL and COMMUNITY_PLUGIN_DIR (relative to the working directory). */
export const defaultDatabaseUrl = (dataDir = DEFAULT_DATA_DIR) => `sqlite:${join(dataDir, 'svc.sqlite')}`;
export const defaultPluginDir = (dataDir = DEFAULT_DATA_DIR) => join(dataDir, 'community-plugins');

/**
 * Bad settings stop the boot; the message names every bad variable and what it must be, in
 * one line (`Invalid environment: A must be ...; B must be ...`).
 */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(variable: string, requirement: string);
  constructor(problems: string[]);
  constructor(variableOrProblems: string | string[], requirement?: string) {
    const problems =
      typeof variableOrProblems === 'string'
        ? [`${variableOrProblems} must be ${requirement}`]
        : variableOrProblems;
    super(`Invalid environment: ${problems.join('; ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * Reads settings one by one, noting each bad one instead of stopping at it, so one message
 * names them all (`done()` throws it).
 */
class SettingsReader {
  private readonly problems: string[] = [];

  read<T>(setting: () => T): T {
    try {
      return setting();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.problems.push(...error.problems);
      // Never used: done() throws before the config is returned.
      return undefined as T;
    }
  }

  done(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}

type Env = Record<string, string | undefined>;

function value(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `an integer from ${min} to ${max}`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  const match = allowed.find((option) => option.toLowerCase() === raw.toLowerCase());
  if (!match) throw new ConfigError(name, `one of ${allowed.join(', ')}`);
  return match;
}

function pattern(env: Env, name: string, fallback: string): RegExp {
  const source = value(env, name) ?? fallback;
  try {
    return new RegExp(source);
  } catch {
    throw new ConfigError(name, 'a valid regular expression');
  }
}

function parseDatabaseUrl(raw: string): DatabaseConfig {
  if (raw.startsWith('sqlite:')) {
    const path = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new ConfigError('DATABASE_URL', 'sqlite:<path> with a non-empty path');
    return { type: 'sqlite', path };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL', 'sqlite:<path> or mysql://user:pass@host:3306/db');
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!['mysql:', 'mariadb:'].includes(url.protocol) || !url.hostname || !database) {
    throw new ConfigError('DATABASE_URL', 'sqlite:<path> or mysql://user:pass@host:3306/db');
  }
  return {
    type: 'mysql',
    host: url.hostname,
    port: url.port ? Number(url.port) : 3306,
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database,
  };
}

/**
 * In development a random secret is made once and kept under data/, so tokens survive a
 * restart; production must bring its own.
 */
function jwtSecret(env: Env, production: boolean, dataDir: string): string {
  const secret = value(env, 'JWT_SECRET');
  if (secret !== undefined) {
    if (secret.length < 32) throw new ConfigError('JWT_SECRET', 'at least 32 characters long');
    return secret;
  }
  if (production)
    throw new ConfigError('JWT_SECRET', 'set (at least 32 characters) when NODE_ENV=production');
  const file = join(dataDir, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const generated = randomBytes(48).toString('base64url');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, generated + '\n', { mode: 0o600 });
  return generated;
}

const MANIFEST_KEY_REQUIREMENT = 'an Ed25519 private key in PKCS#8 PEM (openssl genpkey -algorithm ed25519)';

/** PEM as given, or with its line breaks written as `\n` (one-line environment files). */
function ed25519Pem(text: string, variable: string): string {
  const pem = text.replace(/\\n/g, '\n').trim() + '\n';
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType === 'ed25519') return key.export({ type: 'pkcs8', format: 'pem' }).toString();
  } catch {
    // named below
  }
  throw new ConfigError(variable, MANIFEST_KEY_REQUIREMENT);
}

/**
 * The manifest's signing key, like the JWT secret: production brings its own; development
 * makes one once and keeps it under data/, so the public key a framework pinned stays valid.
 */
function pluginManifestKey(env: Env, production: boolean, dataDir: string): string {
  const given = value(env, 'PLUGIN_MANIFEST_KEY');
  if (given !== undefined) return ed25519Pem(given, 'PLUGIN_MANIFEST_KEY');
  if (production)
    throw new ConfigError(
      'PLUGIN_MANIFEST_KEY',
      `set to ${MANIFEST_KEY_REQUIREMENT} when NODE_ENV=production`,
    );
  const file = join(dataDir, 'plugin-manifest-key.pem');
  if (existsSync(file)) return ed25519Pem(readFileSync(file, 'utf8'), file);
  const generated = generateKeyPairSync('ed25519')
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, generated, { mode: 0o600 });
  return generated;
}

function smtp(env: Env): SmtpConfig | null {
  const host = value(env, 'SMTP_HOST');
  if (host === undefined) return null;
  const secure = oneOf(env, 'SMTP_SECURE', 'false', ['true', 'false']) === 'true';
  return {
    host,
    port: integer(env, 'SMTP_PORT', secure ? 465 : 587, 1, 65535),
    user: value(env, 'SMTP_USER'),
    password: env.SMTP_PASSWORD,
    secure,
  };
}

function redisUrl(env: Env): string | null {
  const raw = value(env, 'REDIS_URL');
  if (raw === undefined) return null;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['redis:', 'rediss:'].includes(url.protocol) || !url.hostname) {
    throw new ConfigError('REDIS_URL', 'a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0');
  }
  return raw;
}

/**
 * The base of the links in mail when the pages are served elsewhere, or over https behind a
 * proxy: an absolute http(s) URL with a host and maybe a path, without query or fragment.
 */
function frontendUrl(env: Env): string | null {
  const raw = value(env, 'FRONTEND_URL');
  if (raw === undefined) return null;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (
    !url ||
    !['http:', 'https:'].includes(url.protocol) ||
    !url.hostname ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== '' ||
    raw.includes('?') ||
    raw.includes('#')
  ) {
    throw new ConfigError(
      'FRONTEND_URL',
      'an http:// or https:// URL without query or fragment, e.g. https://svc.example.com',
    );
  }
  return url.href.replace(/\/+$/, '');
}

/** An IPv4 or IPv6 address, or one with a prefix length (`10.0.0.0/8`, `fd00::/8`). */
function trustedProxies(env: Env): string[] {
  const entries = (value(env, 'TRUSTED_PROXIES') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const prefixOk =
      prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (family === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError(
        'TRUSTED_PROXIES',
        'a comma-separated list of IP addresses or CIDR ranges, e.g. 10.0.0.5,192.168.0.0/16',
      );
    }
  }
  return entries;
}

function corsOrigins(env: Env): string[] {
  const origins = (value(env, 'CORS_ORIGINS') ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError('CORS_ORIGINS', 'a comma-separated list of origins like https://app.example.com');
    }
  }
  return origins;
}

/**
 * Node refuses a headers limit longer than the whole request's; the boot names it instead.
 * A bad value of either is named by its own read, and not compared here.
 */
function headersWithinRequest(headersMs: number | undefined, requestMs: number | undefined): void {
  if (headersMs === undefined || requestMs === undefined || headersMs <= requestMs) return;
  throw new ConfigError(
    'HTTP_HEADERS_TIMEOUT_SECONDS',
    `at most HTTP_REQUEST_TIMEOUT_SECONDS (${requestMs / 1000})`,
  );
}

/** `terminal`: stdout is a terminal, where logs are readable lines unless LOG_FORMAT says otherwise. */
export function loadConfig(env: Env, dataDir = DEFAULT_DATA_DIR, terminal = false): AppConfig {
  const settings = new SettingsReader();
  const read = <T>(setting: () => T): T => settings.read(setting);
  const production = value(env, 'NODE_ENV') === 'production';
  const mailFrom = value(env, 'SMTP_FROM') ?? 'SVC <no-reply@localhost>';
  const port = read(() => integer(env, 'PORT', 8009, 0, 65535));
  const config: AppConfig = {
    production,
    port,
    host: value(env, 'HOST') ?? '127.0.0.1',
    database: read(() => parseDatabaseUrl(value(env, 'DATABASE_URL') ?? defaultDatabaseUrl(dataDir))),
    databaseQueryTimeoutMs: read(() => integer(env, 'DATABASE_QUERY_TIMEOUT_SECONDS', 5, 1, 300) * 1000),
    databaseStartupWaitMs: read(() => integer(env, 'DATABASE_STARTUP_WAIT_SECONDS', 60, 0, 3600) * 1000),
    shutdownGraceMs: read(() => integer(env, 'SHUTDOWN_GRACE_SECONDS', 10, 1, 3600) * 1000),
    shutdownDrainMs: read(() => integer(env, 'SHUTDOWN_DRAIN_SECONDS', 0, 0, 3600) * 1000),
    jwt: {
      secret: read(() => jwtSecret(env, production, dataDir)),
      algorithm: read(() => oneOf(env, 'JWT_ALGORITHM', 'HS256', ['HS256', 'HS384', 'HS512'] as const)),
      expiresInSeconds: read(() => integer(env, 'JWT_EXPIRES_IN', 86400, 60, 31_536_000)),
    },
    smtp: read(() => smtp(env)),
    mailFrom,
    serverAddr: value(env, 'SERVER_ADDR') ?? '127.0.0.1',
    // The API serves the pages the links open, so by default the links point at the API itself.
    frontendPort: read(() => integer(env, 'FRONTEND_PORT', port, 1, 65535)),
    frontendUrl: read(() => frontendUrl(env)),
    emailPattern: read(() => pattern(env, 'EMAIL_PATTERN', DEFAULT_EMAIL_PATTERN)),
    passwordPattern: read(() => pattern(env, 'PASSWORD_PATTERN', DEFAULT_PASSWORD_PATTERN)),
    bcryptCost: read(() => integer(env, 'BCRYPT_COST', 12, 4, 15)),
    accountConfirmation: read(() => oneOf(env, 'ACCOUNT_CONFIRMATION', 'keep', ACCOUNT_CONFIRMATION)),
    adminEmails: (value(env, 'SVC_ADMIN_EMAILS') ?? '')
      .split(',')
      .map((email) => email.trim().toLowerCase())
      .filter((email) => email !== ''),
    communityPluginDir: value(env, 'COMMUNITY_PLUGIN_DIR') ?? defaultPluginDir(dataDir),
    pluginUploadMaxSize: read(() => integer(env, 'PLUGIN_UPLOAD_MAX_SIZE', 262_144, 1, 16 * 1024 * 1024)),
    pluginUploadsPerHour: read(() => integer(env, 'PLUGIN_UPLOADS_PER_HOUR', 30, 1, 1_000_000)),
    pluginMaxPendingPerUser: read(() => integer(env, 'PLUGIN_MAX_PENDING_PER_USER', 10, 1, 1_000_000)),
    pluginDiffThreads: read(() =>
      integer(env, 'PLUGIN_DIFF_THREADS', Math.max(1, Math.min(4, availableParallelism())), 1, 64),
    ),
    pluginDiffMaxQueued: read(() => integer(env, 'PLUGIN_DIFF_MAX_QUEUED', 32, 0, 10_000)),
    pluginDirMinFreeBytes: read(() =>
      integer(env, 'PLUGIN_DIR_MIN_FREE_BYTES', 64 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
    ),
    pluginReconcileIntervalSeconds: read(() =>
      integer(env, 'PLUGIN_RECONCILE_INTERVAL_SECONDS', 600, 0, 86_400),
    ),
    pluginFileGraceSeconds: read(() => integer(env, 'PLUGIN_FILE_GRACE_SECONDS', 300, 0, 86_400)),
    maxTargetsPerUser: read(() => integer(env, 'MAX_TARGETS_PER_USER', 2_000, 1, 1_000_000)),
    maxSessionsPerUser: read(() => integer(env, 'MAX_SESSIONS_PER_USER', 200, 1, 1_000_000)),
    pluginManifestKey: read(() => pluginManifestKey(env, production, dataDir)),
    pluginManifestTtlSeconds: read(() => integer(env, 'PLUGIN_MANIFEST_TTL_SECONDS', 86_400, 60, 2_592_000)),
    pluginApprovalsRequired: read(() => integer(env, 'PLUGIN_APPROVALS_REQUIRED', 1, 1, 20)),
    pluginSelfReview: read(() => oneOf(env, 'PLUGIN_SELF_REVIEW', 'forbidden', PLUGIN_SELF_REVIEW)),
    rateLimit: read(() => oneOf(env, 'RATE_LIMIT', 'on', ['on', 'off']) === 'on'),
    redisUrl: read(() => redisUrl(env)),
    trustedProxies: read(() => trustedProxies(env)),
    httpHeadersTimeoutMs: read(() => integer(env, 'HTTP_HEADERS_TIMEOUT_SECONDS', 15, 1, 300) * 1000),
    httpRequestTimeoutMs: read(() => integer(env, 'HTTP_REQUEST_TIMEOUT_SECONDS', 60, 1, 3600) * 1000),
    httpKeepAliveTimeoutMs: read(() => integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS', 5, 1, 600) * 1000),
    httpConnectionsPerAddress: read(() => integer(env, 'HTTP_CONNECTIONS_PER_ADDRESS', 256, 0, 1_000_000)),
    logLevel: read(() => oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS)),
    logFormat: read(() => oneOf(env, 'LOG_FORMAT', terminal ? 'pretty' : 'json', LOG_FORMATS)),
    corsOrigins: read(() => corsOrigins(env)),
    pluginTestRun: {
      bwrapPath: value(env, 'PLUGIN_TEST_RUN_BWRAP') ?? '/usr/bin/bwrap',
      pythonPath: value(env, 'PLUGIN_TEST_RUN_PYTHON') ?? '/usr/bin/python3',
      cpuSeconds: read(() => integer(env, 'PLUGIN_TEST_RUN_CPU_SECONDS', 10, 1, 3600)),
      wallSeconds: read(() => integer(env, 'PLUGIN_TEST_RUN_WALL_SECONDS', 30, 1, 3600)),
      addressSpaceBytes: read(() =>
        integer(env, 'PLUGIN_TEST_RUN_MEMORY_BYTES', 512 * 1024 * 1024, 64 * 1024 * 1024, 64 * 1024 ** 3),
      ),
      fileSizeBytes: read(() =>
        integer(env, 'PLUGIN_TEST_RUN_FILE_SIZE_BYTES', 16 * 1024 * 1024, 4096, 4 * 1024 ** 3),
      ),
      processes: read(() => integer(env, 'PLUGIN_TEST_RUN_PROCESSES', 16, 2, 4096)),
      queueLength: read(() => integer(env, 'PLUGIN_TEST_RUN_QUEUE', 8, 0, 1000)),
    },
  };
  read(() => headersWithinRequest(config.httpHeadersTimeoutMs, config.httpRequestTimeoutMs));
  settings.done();
  return config;
}
