import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  corsOrigins,
  DatabaseConfig,
  Env,
  frontendUrl,
  headersWithinRequest,
  integer,
  jwtSecret,
  MetricsConfig,
  metricsSettings,
  oneOf,
  parseDatabaseUrl,
  pattern,
  pluginManifestKey,
  redisUrl,
  secretFile,
  SettingsReader,
  smtp,
  SmtpConfig,
  trustedProxies,
  value,
} from './env-values';

export { ConfigError } from './env-values';
export type { DatabaseConfig, MetricsConfig, SmtpConfig } from './env-values';

export type JwtAlgorithm = 'HS256' | 'HS384' | 'HS512';

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
  /** `required`: admin routes answer 403 until the admin has confirmed a TOTP (docs/accounts-security.md). */
  adminSecondFactor: AdminSecondFactor;
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
  /**
   * A public marketplace: the manifest, its key and the files it lists are read without a
   * token (a token that is sent is still checked). Off by default: the catalogue is for members.
   */
  pluginAnonymousReads: boolean;
  rateLimit: boolean;
  /** Shared limit counters for every replica; null keeps them in the process. */
  redisUrl: string | null;
  /**
   * Addresses and CIDR ranges of the proxies whose `X-Forwarded-For` is believed: the client's
   * address is the right-most one not among them. Empty: the peer's own address.
   */
  trustedProxies: string[];
  /**
   * An IPv6 client's limits and connection cap count its network of this many leading bits
   * (one person usually holds a /64), not its single address (src/common/client-address.ts).
   */
  clientIpv6Prefix: number;
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
  /** GET /metrics (docs/operations.md#metrics); null: no metrics are kept and none are served. */
  metrics: MetricsConfig | null;
}

export interface PluginTestRunConfig {
  bwrapPath: string;
  stracePath: string;
  pythonPath: string;
  cpuSeconds: number;
  wallSeconds: number;
  addressSpaceBytes: number;
  fileSizeBytes: number;
  processes: number;
  cpuPriority: 'idle' | 'normal';
  /** Runs waiting for a free core; past it a run is refused with 503. */
  queueLength: number;
}

export const ACCOUNT_CONFIRMATION = ['keep', 'claim'] as const;
export type AccountConfirmation = (typeof ACCOUNT_CONFIRMATION)[number];

export const ADMIN_SECOND_FACTOR = ['optional', 'required'] as const;
export type AdminSecondFactor = (typeof ADMIN_SECOND_FACTOR)[number];

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

/** Where the JWT secret and the manifest key live on disk (null: the environment sets it), for backups. */
export const secretFiles = (env: Env, dataDir = DEFAULT_DATA_DIR) => ({
  JWT_SECRET: secretFile(env, 'JWT_SECRET', dataDir),
  PLUGIN_MANIFEST_KEY: secretFile(env, 'PLUGIN_MANIFEST_KEY', dataDir),
});

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
    adminSecondFactor: read(() => oneOf(env, 'ADMIN_SECOND_FACTOR', 'optional', ADMIN_SECOND_FACTOR)),
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
    pluginAnonymousReads: read(() => oneOf(env, 'PLUGIN_ANONYMOUS_READS', 'off', ['off', 'on']) === 'on'),
    rateLimit: read(() => oneOf(env, 'RATE_LIMIT', 'on', ['on', 'off']) === 'on'),
    redisUrl: read(() => redisUrl(env)),
    trustedProxies: read(() => trustedProxies(env)),
    clientIpv6Prefix: read(() => integer(env, 'CLIENT_IPV6_PREFIX', 64, 1, 128)),
    httpHeadersTimeoutMs: read(() => integer(env, 'HTTP_HEADERS_TIMEOUT_SECONDS', 15, 1, 300) * 1000),
    httpRequestTimeoutMs: read(() => integer(env, 'HTTP_REQUEST_TIMEOUT_SECONDS', 60, 1, 3600) * 1000),
    httpKeepAliveTimeoutMs: read(() => integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS', 5, 1, 600) * 1000),
    httpConnectionsPerAddress: read(() => integer(env, 'HTTP_CONNECTIONS_PER_ADDRESS', 256, 0, 1_000_000)),
    logLevel: read(() => oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS)),
    logFormat: read(() => oneOf(env, 'LOG_FORMAT', terminal ? 'pretty' : 'json', LOG_FORMATS)),
    corsOrigins: read(() => corsOrigins(env)),
    metrics: read(() => metricsSettings(env, port)),
    pluginTestRun: {
      bwrapPath: value(env, 'PLUGIN_TEST_RUN_BWRAP') ?? '/usr/bin/bwrap',
      stracePath: value(env, 'PLUGIN_TEST_RUN_STRACE') ?? '/usr/bin/strace',
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
      cpuPriority: read(() =>
        oneOf(env, 'PLUGIN_TEST_RUN_CPU_PRIORITY', 'idle', ['idle', 'normal'] as const),
      ),
      queueLength: read(() => integer(env, 'PLUGIN_TEST_RUN_QUEUE', 8, 0, 1000)),
    },
  };
  read(() => headersWithinRequest(config.httpHeadersTimeoutMs, config.httpRequestTimeoutMs));
  settings.done();
  return config;
}
