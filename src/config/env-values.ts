import { createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';

/*
 * How each setting is read from the environment and checked (app-config.ts's loadConfig puts
 * them together): a bad one is a ConfigError naming the variable and what it must be.
 */

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
export class SettingsReader {
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

export type Env = Record<string, string | undefined>;

export function value(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `an integer from ${min} to ${max}`);
  }
  return Number(raw);
}

export function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  const match = allowed.find((option) => option.toLowerCase() === raw.toLowerCase());
  if (!match) throw new ConfigError(name, `one of ${allowed.join(', ')}`);
  return match;
}

export function pattern(env: Env, name: string, fallback: string): RegExp {
  const source = value(env, name) ?? fallback;
  try {
    return new RegExp(source);
  } catch {
    throw new ConfigError(name, 'a valid regular expression');
  }
}

export function parseDatabaseUrl(raw: string): DatabaseConfig {
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

/** The files under data/ that hold the development secrets (production sets them in the environment). */
export const SECRET_FILES = {
  JWT_SECRET: 'jwt-secret',
  PLUGIN_MANIFEST_KEY: 'plugin-manifest-key.pem',
} as const;

/** Where a secret is read from: its file under data/, or null when the environment sets it. */
export function secretFile(env: Env, name: keyof typeof SECRET_FILES, dataDir: string): string | null {
  return value(env, name) === undefined ? join(dataDir, SECRET_FILES[name]) : null;
}

/**
 * In development a random secret is made once and kept under data/, so tokens survive a
 * restart; production must bring its own.
 */
export function jwtSecret(env: Env, production: boolean, dataDir: string): string {
  const secret = value(env, 'JWT_SECRET');
  if (secret !== undefined) {
    if (secret.length < 32) throw new ConfigError('JWT_SECRET', 'at least 32 characters long');
    return secret;
  }
  if (production)
    throw new ConfigError('JWT_SECRET', 'set (at least 32 characters) when NODE_ENV=production');
  const file = join(dataDir, SECRET_FILES.JWT_SECRET);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const generated = randomBytes(48).toString('base64url');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, generated + '\n', { mode: 0o600 });
  return generated;
}

const MANIFEST_KEY_REQUIREMENT = 'an Ed25519 private key in PKCS#8 PEM (openssl genpkey -algorithm ed25519)';

/** PEM as given, or with its line breaks written as `\n` (one-line environment files). */
export function ed25519Pem(text: string, variable: string): string {
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
export function pluginManifestKey(env: Env, production: boolean, dataDir: string): string {
  const given = value(env, 'PLUGIN_MANIFEST_KEY');
  if (given !== undefined) return ed25519Pem(given, 'PLUGIN_MANIFEST_KEY');
  if (production)
    throw new ConfigError(
      'PLUGIN_MANIFEST_KEY',
      `set to ${MANIFEST_KEY_REQUIREMENT} when NODE_ENV=production`,
    );
  const file = join(dataDir, SECRET_FILES.PLUGIN_MANIFEST_KEY);
  if (existsSync(file)) return ed25519Pem(readFileSync(file, 'utf8'), file);
  const generated = generateKeyPairSync('ed25519')
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, generated, { mode: 0o600 });
  return generated;
}

export function smtp(env: Env): SmtpConfig | null {
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

/** The URL, or undefined when it is not one (the caller says what it should be). */
function parsedUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

export function redisUrl(env: Env): string | null {
  const raw = value(env, 'REDIS_URL');
  if (raw === undefined) return null;
  const url = parsedUrl(raw);
  if (!url || !['redis:', 'rediss:'].includes(url.protocol) || !url.hostname) {
    throw new ConfigError('REDIS_URL', 'a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0');
  }
  return raw;
}

/**
 * The base of the links in mail when the pages are served elsewhere, or over https behind a
 * proxy: an absolute http(s) URL with a host and maybe a path, without query or fragment.
 */
export function frontendUrl(env: Env): string | null {
  const raw = value(env, 'FRONTEND_URL');
  if (raw === undefined) return null;
  const url = parsedUrl(raw);
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
export function trustedProxies(env: Env): string[] {
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

export function corsOrigins(env: Env): string[] {
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
export function headersWithinRequest(headersMs: number | undefined, requestMs: number | undefined): void {
  if (headersMs === undefined || requestMs === undefined || headersMs <= requestMs) return;
  throw new ConfigError(
    'HTTP_HEADERS_TIMEOUT_SECONDS',
    `at most HTTP_REQUEST_TIMEOUT_SECONDS (${requestMs / 1000})`,
  );
}
