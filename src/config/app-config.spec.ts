import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './app-config';

const SECRET = 's'.repeat(32);
const dataDir = () => mkdtempSync(join(tmpdir(), 'svc-config-'));

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const dir = dataDir();
    const config = loadConfig({ JWT_SECRET: SECRET }, dir);
    expect(config).toMatchObject({
      port: 8009,
      host: '127.0.0.1',
      database: { type: 'sqlite', path: join(dir, 'svc.sqlite') },
      jwt: { secret: SECRET, algorithm: 'HS256', expiresInSeconds: 86400 },
      smtp: null,
      serverAddr: '127.0.0.1',
      frontendPort: 8009,
      frontendUrl: null,
      bcryptCost: 12,
      accountConfirmation: 'keep',
      adminEmails: [],
      adminSecondFactor: 'optional',
      communityPluginDir: join(dir, 'community-plugins'),
      pluginUploadMaxSize: 262144,
      pluginUploadsPerHour: 30,
      pluginMaxPendingPerUser: 10,
      pluginDiffThreads: Math.max(1, Math.min(4, availableParallelism())),
      pluginDiffMaxQueued: 32,
      pluginDirMinFreeBytes: 64 * 1024 * 1024,
      pluginReconcileIntervalSeconds: 600,
      pluginFileGraceSeconds: 300,
      pluginManifestTtlSeconds: 86400,
      pluginApprovalsRequired: 1,
      pluginSelfReview: 'forbidden',
      pluginAnonymousReads: false,
      rateLimit: true,
      redisUrl: null,
      trustedProxies: [],
      clientIpv6Prefix: 64,
      databaseQueryTimeoutMs: 5000,
      databaseStartupWaitMs: 60000,
      shutdownGraceMs: 10000,
      shutdownDrainMs: 0,
      httpHeadersTimeoutMs: 15_000,
      httpRequestTimeoutMs: 60_000,
      httpKeepAliveTimeoutMs: 5_000,
      httpConnectionsPerAddress: 256,
    });
  });

  it('points the links in mail at the API itself unless FRONTEND_PORT or FRONTEND_URL says otherwise', () => {
    expect(loadConfig({ JWT_SECRET: SECRET, PORT: '9100' }, dataDir())).toMatchObject({
      port: 9100,
      frontendPort: 9100,
      frontendUrl: null,
    });
    expect(loadConfig({ JWT_SECRET: SECRET, PORT: '9100', FRONTEND_PORT: '8019' }, dataDir())).toMatchObject({
      port: 9100,
      frontendPort: 8019,
    });
    // PORT=0: the port the system gives the server, known once it listens.
    expect(loadConfig({ JWT_SECRET: SECRET, PORT: '0' }, dataDir()).frontendPort).toBe(0);
    expect(
      loadConfig({ JWT_SECRET: SECRET, FRONTEND_URL: 'https://svc.example.com/app/' }, dataDir()).frontendUrl,
    ).toBe('https://svc.example.com/app');
  });

  it('parses a MySQL URL', () => {
    const config = loadConfig({
      JWT_SECRET: SECRET,
      DATABASE_URL: 'mysql://svc:p%40ss@db.internal:3307/svc_api',
    });
    expect(config.database).toEqual({
      type: 'mysql',
      host: 'db.internal',
      port: 3307,
      username: 'svc',
      password: 'p@ss',
      database: 'svc_api',
    });
  });

  it.each([
    ['PORT', 'eighty', 'Invalid environment: PORT must be an integer from 0 to 65535'],
    ['JWT_ALGORITHM', 'RS256', 'Invalid environment: JWT_ALGORITHM must be one of HS256, HS384, HS512'],
    ['JWT_EXPIRES_IN', '-5', 'Invalid environment: JWT_EXPIRES_IN must be an integer from 60 to 31536000'],
    [
      'DATABASE_URL',
      'postgres://x/y',
      'Invalid environment: DATABASE_URL must be sqlite:<path> or mysql://user:pass@host:3306/db',
    ],
    ['EMAIL_PATTERN', '([', 'Invalid environment: EMAIL_PATTERN must be a valid regular expression'],
    ['BCRYPT_COST', '40', 'Invalid environment: BCRYPT_COST must be an integer from 4 to 15'],
    ['PLUGIN_DIFF_THREADS', '0', 'Invalid environment: PLUGIN_DIFF_THREADS must be an integer from 1 to 64'],
    [
      'PLUGIN_DIFF_MAX_QUEUED',
      '-1',
      'Invalid environment: PLUGIN_DIFF_MAX_QUEUED must be an integer from 0 to 10000',
    ],
    [
      'DATABASE_QUERY_TIMEOUT_SECONDS',
      '0',
      'Invalid environment: DATABASE_QUERY_TIMEOUT_SECONDS must be an integer from 1 to 300',
    ],
    [
      'DATABASE_STARTUP_WAIT_SECONDS',
      '1.5',
      'Invalid environment: DATABASE_STARTUP_WAIT_SECONDS must be an integer from 0 to 3600',
    ],
    [
      'SHUTDOWN_GRACE_SECONDS',
      'soon',
      'Invalid environment: SHUTDOWN_GRACE_SECONDS must be an integer from 1 to 3600',
    ],
    ['RATE_LIMIT', 'maybe', 'Invalid environment: RATE_LIMIT must be one of on, off'],
    [
      'PLUGIN_MAX_PENDING_PER_USER',
      '0',
      'Invalid environment: PLUGIN_MAX_PENDING_PER_USER must be an integer from 1 to 1000000',
    ],
    [
      'PLUGIN_DIR_MIN_FREE_BYTES',
      '1e9',
      'Invalid environment: PLUGIN_DIR_MIN_FREE_BYTES must be an integer from 0 to 9007199254740991',
    ],
    [
      'PLUGIN_RECONCILE_INTERVAL_SECONDS',
      '-1',
      'Invalid environment: PLUGIN_RECONCILE_INTERVAL_SECONDS must be an integer from 0 to 86400',
    ],
    [
      'PLUGIN_FILE_GRACE_SECONDS',
      '86401',
      'Invalid environment: PLUGIN_FILE_GRACE_SECONDS must be an integer from 0 to 86400',
    ],
    [
      'REDIS_URL',
      'http://127.0.0.1:6379',
      'Invalid environment: REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0',
    ],
    [
      'PLUGIN_MANIFEST_TTL_SECONDS',
      '59',
      'Invalid environment: PLUGIN_MANIFEST_TTL_SECONDS must be an integer from 60 to 2592000',
    ],
    [
      'PLUGIN_MANIFEST_TTL_SECONDS',
      '2592001',
      'Invalid environment: PLUGIN_MANIFEST_TTL_SECONDS must be an integer from 60 to 2592000',
    ],
    [
      'PLUGIN_MANIFEST_TTL_SECONDS',
      '1d',
      'Invalid environment: PLUGIN_MANIFEST_TTL_SECONDS must be an integer from 60 to 2592000',
    ],
    [
      'PLUGIN_APPROVALS_REQUIRED',
      '0',
      'Invalid environment: PLUGIN_APPROVALS_REQUIRED must be an integer from 1 to 20',
    ],
    ['ACCOUNT_CONFIRMATION', 'clear', 'Invalid environment: ACCOUNT_CONFIRMATION must be one of keep, claim'],
    [
      'ADMIN_SECOND_FACTOR',
      'always',
      'Invalid environment: ADMIN_SECOND_FACTOR must be one of optional, required',
    ],
    [
      'PLUGIN_SELF_REVIEW',
      'sometimes',
      'Invalid environment: PLUGIN_SELF_REVIEW must be one of forbidden, allowed',
    ],
    [
      'PLUGIN_MANIFEST_KEY',
      'not a key',
      'Invalid environment: PLUGIN_MANIFEST_KEY must be an Ed25519 private key in PKCS#8 PEM (openssl genpkey -algorithm ed25519)',
    ],
    ['SMTP_SECURE', 'yes', 'Invalid environment: SMTP_SECURE must be one of true, false'],
    ...['10.0.0', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/8', 'balancer', '10.0.0.5, 10.0.0.0/x'].map(
      (value) => [
        'TRUSTED_PROXIES',
        value,
        'Invalid environment: TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges, e.g. 10.0.0.5,192.168.0.0/16',
      ],
    ),
    [
      'HTTP_HEADERS_TIMEOUT_SECONDS',
      '0',
      'Invalid environment: HTTP_HEADERS_TIMEOUT_SECONDS must be an integer from 1 to 300',
    ],
    [
      'HTTP_REQUEST_TIMEOUT_SECONDS',
      '3601',
      'Invalid environment: HTTP_REQUEST_TIMEOUT_SECONDS must be an integer from 1 to 3600',
    ],
    [
      'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS',
      '0',
      'Invalid environment: HTTP_KEEP_ALIVE_TIMEOUT_SECONDS must be an integer from 1 to 600',
    ],
    [
      'HTTP_CONNECTIONS_PER_ADDRESS',
      'many',
      'Invalid environment: HTTP_CONNECTIONS_PER_ADDRESS must be an integer from 0 to 1000000',
    ],
    [
      'HTTP_HEADERS_TIMEOUT_SECONDS',
      '61',
      'Invalid environment: HTTP_HEADERS_TIMEOUT_SECONDS must be at most HTTP_REQUEST_TIMEOUT_SECONDS (60)',
    ],
    ['JWT_SECRET', 'short', 'Invalid environment: JWT_SECRET must be at least 32 characters long'],
    ['FRONTEND_PORT', '0', 'Invalid environment: FRONTEND_PORT must be an integer from 1 to 65535'],
    [
      'FRONTEND_URL',
      'ftp://svc.example.com',
      'Invalid environment: FRONTEND_URL must be an http:// or https:// URL without query or fragment, e.g. https://svc.example.com',
    ],
    [
      'FRONTEND_URL',
      'https://svc.example.com/?next=x',
      'Invalid environment: FRONTEND_URL must be an http:// or https:// URL without query or fragment, e.g. https://svc.example.com',
    ],
    ['METRICS_PORT', '70000', 'Invalid environment: METRICS_PORT must be an integer from 0 to 65535'],
    ['METRICS_PORT', '8009', 'Invalid environment: METRICS_PORT must be other than PORT (8009)'],
    [
      'METRICS_HOST',
      '0.0.0.0',
      'Invalid environment: METRICS_HOST must be set only with METRICS_PORT (it is where that listener binds)',
    ],
    ...['short', `${'t'.repeat(31)}`, `${'t'.repeat(32)} x`].map((value) => [
      'METRICS_TOKEN',
      value,
      'Invalid environment: METRICS_TOKEN must be at least 32 printable ASCII characters without spaces',
    ]),
  ])('stops on a bad %s with one line naming it', (variable, value, message) => {
    const env = { JWT_SECRET: SECRET, SMTP_HOST: 'mail', [variable]: value };
    expect(() => loadConfig(env, dataDir())).toThrow(
      new ConfigError(variable, message.split(' must be ')[1]),
    );
    expect(() => loadConfig(env, dataDir())).toThrow(message);
  });

  it('serves no metrics by default; a port of their own on loopback, a token, or both', () => {
    const metrics = (env: Record<string, string>) =>
      loadConfig({ JWT_SECRET: SECRET, ...env }, dataDir()).metrics;
    const token = 'm'.repeat(32);
    expect(metrics({})).toBeNull();
    expect(metrics({ METRICS_PORT: '9464' })).toEqual({ port: 9464, host: '127.0.0.1', token: null });
    expect(metrics({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' })).toEqual({
      port: 0,
      host: '0.0.0.0',
      token: null,
    });
    expect(metrics({ METRICS_TOKEN: token })).toEqual({ port: null, host: '127.0.0.1', token });
    expect(metrics({ METRICS_PORT: '9464', METRICS_TOKEN: token })).toEqual({
      port: 9464,
      host: '127.0.0.1',
      token,
    });
    // PORT=0 and METRICS_PORT=0 are two free ports, not one.
    expect(metrics({ PORT: '0', METRICS_PORT: '0' })).toEqual({ port: 0, host: '127.0.0.1', token: null });
  });

  it('reads the trusted proxies: addresses and CIDR ranges, IPv4 and IPv6', () => {
    expect(
      loadConfig(
        { JWT_SECRET: SECRET, TRUSTED_PROXIES: ' 10.0.0.5, 192.168.0.0/16,::1,fd00::/8 ,' },
        dataDir(),
      ).trustedProxies,
    ).toEqual(['10.0.0.5', '192.168.0.0/16', '::1', 'fd00::/8']);
    expect(loadConfig({ JWT_SECRET: SECRET, TRUSTED_PROXIES: ' ' }, dataDir()).trustedProxies).toEqual([]);
  });

  it("takes a headers limit up to the whole request's, and compares only valid values", () => {
    const config = loadConfig(
      { JWT_SECRET: SECRET, HTTP_HEADERS_TIMEOUT_SECONDS: '20', HTTP_REQUEST_TIMEOUT_SECONDS: '20' },
      dataDir(),
    );
    expect([config.httpHeadersTimeoutMs, config.httpRequestTimeoutMs]).toEqual([20_000, 20_000]);
    expect(() =>
      loadConfig(
        { JWT_SECRET: SECRET, HTTP_HEADERS_TIMEOUT_SECONDS: '20', HTTP_REQUEST_TIMEOUT_SECONDS: 'x' },
        dataDir(),
      ),
    ).toThrow(new ConfigError(['HTTP_REQUEST_TIMEOUT_SECONDS must be an integer from 1 to 3600']));
  });

  it('refuses to start in production without a JWT_SECRET', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' }, dataDir())).toThrow(
      'Invalid environment: JWT_SECRET must be set (at least 32 characters) when NODE_ENV=production',
    );
  });

  it('refuses to start in production without a PLUGIN_MANIFEST_KEY, and takes a PEM with escaped line breaks', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: SECRET }, dataDir())).toThrow(
      'Invalid environment: PLUGIN_MANIFEST_KEY must be set to an Ed25519 private key in PKCS#8 PEM',
    );
    const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const oneLine = pem.trim().replace(/\n/g, '\\n');
    const config = loadConfig(
      { NODE_ENV: 'production', JWT_SECRET: SECRET, PLUGIN_MANIFEST_KEY: oneLine },
      dataDir(),
    );
    expect(config.pluginManifestKey).toBe(pem);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    expect(() => loadConfig({ JWT_SECRET: SECRET, PLUGIN_MANIFEST_KEY: rsa.toString() }, dataDir())).toThrow(
      'PLUGIN_MANIFEST_KEY must be an Ed25519 private key',
    );
  });

  it('makes a development manifest key once and keeps it under the data directory', () => {
    const dir = dataDir();
    const first = loadConfig({ JWT_SECRET: SECRET }, dir).pluginManifestKey;
    expect(createPrivateKey(first).asymmetricKeyType).toBe('ed25519');
    expect(loadConfig({ JWT_SECRET: SECRET }, dir).pluginManifestKey).toBe(first);
    expect(statSync(join(dir, 'plugin-manifest-key.pem')).mode & 0o777).toBe(0o600);
  });

  it('makes a development secret once and keeps it under the data directory', () => {
    const dir = dataDir();
    const first = loadConfig({}, dir).jwt.secret;
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({}, dir).jwt.secret).toBe(first);
    expect(readFileSync(join(dir, 'jwt-secret'), 'utf8').trim()).toBe(first);
    expect(statSync(join(dir, 'jwt-secret')).mode & 0o777).toBe(0o600);
  });

  it('reads SMTP, admins and the rate-limit switch', () => {
    const config = loadConfig({
      JWT_SECRET: SECRET,
      SMTP_HOST: 'smtp.example.com',
      SMTP_USER: 'u',
      SMTP_PASSWORD: 'p',
      SVC_ADMIN_EMAILS: ' Root@Example.com, ,ops@example.com ',
      RATE_LIMIT: 'off',
      REDIS_URL: 'redis://127.0.0.1:6379/2',
    });
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379/2');
    expect(config.smtp).toEqual({
      host: 'smtp.example.com',
      port: 587,
      user: 'u',
      password: 'p',
      secure: false,
    });
    expect(config.adminEmails).toEqual(['root@example.com', 'ops@example.com']);
    expect(config.rateLimit).toBe(false);
  });

  describe('default patterns', () => {
    const { emailPattern, passwordPattern } = loadConfig({ JWT_SECRET: SECRET });
    it.each(['john.doe@mail.example.com', 'a+b@ex.io', 'x_y-z@sub.domain.org'])('accepts email %s', (email) =>
      expect(emailPattern.test(email)).toBe(true),
    );
    it.each([
      'plain',
      'a@b',
      'a@@b.com',
      'a b@c.com',
      '.a@b.com',
      'a.@b.com',
      'a@b..com',
      'a@-b.com',
      `${'a'.repeat(250)}@b.com`,
    ])('refuses email %s', (email) => expect(emailPattern.test(email)).toBe(false));
    it.each(['Str0ng!Pass', 'aB3$aB3$', 'Ünïcode1!X'])('accepts password %s', (password) =>
      expect(passwordPattern.test(password)).toBe(true),
    );
    it.each([
      'Sh0rt!A',
      'alllower1!',
      'ALLUPPER1!',
      'NoDigits!!',
      'NoSymbol11',
      `Aa1!${'x'.repeat(61)}`,
      'Tab\tTab1!',
    ])('refuses password %j', (password) => expect(passwordPattern.test(password)).toBe(false));
  });
});
