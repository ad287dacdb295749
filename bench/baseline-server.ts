/**
 * The bare baseline: a plain node:http server doing by hand what the app does for the
 * measured routes, with nothing else around it (no framework, no middleware, no logging, no
 * ORM). Same JWT verification as the app's guard (jsonwebtoken, same secret and algorithm),
 * same token-record lookup, same listing SQL through the same driver, same JSON and headers. What the
 * app spends beyond this is what the framework and our own layers cost.
 */
import jwt from 'jsonwebtoken';
import { createPool, Pool, RowDataPacket } from 'mysql2/promise';
import { createHash, createSecretKey, randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { identityKey } from '../src/users/identity-key';
import { BcryptPool } from '../src/account/bcrypt-pool';
import { helmetHeaders } from '../src/http/security-headers';
import type { AppConfig } from '../src/config/app-config';
import { PUBLIC_VIEW_COLUMNS, type PublicViewRow } from '../src/community-plugins/views/public-view-columns';

interface TokenOwnerRow {
  userId: number;
  name: string;
  email: string;
  isActive: unknown;
  deactivatedAt: unknown;
  isAdmin: unknown;
}

interface SessionRow {
  Session_id: number;
  Session_name: string;
  Session_active: unknown;
}

/** A row of the public view's columns (the app's own list), and the kept count. */
type PluginRow = PublicViewRow & { kept_total: number | string | null };

interface UserRow {
  User_id: number;
  User_name: string;
  User_password: string | null;
  User_is_active: unknown;
  User_deactivated_at: unknown;
  User_email_key: string | null;
  User_email: string;
  User_is_admin: unknown;
  User_password_set_via_otp: unknown;
  User_locked_at: unknown;
  User_credential_generation: number;
}

/** The queries of the measured routes, one implementation per driver. */
interface BaselineStore {
  tokenOwner(tokenHash: string): Promise<TokenOwnerRow | undefined>;
  sessions(userId: number): Promise<SessionRow[]>;
  /** The first page of the public list and its kept size, in one statement as the app reads them. */
  plugins(limit: number, offset: number): Promise<PluginRow[]>;
  usersByKey(key: string): Promise<UserRow[]>;
  storeToken(
    userId: number,
    tokenHash: string,
    expiresAt: Date,
    now: Date,
    generation: number,
  ): Promise<void>;
  close(): Promise<void>;
}

/**
 * The SQL text the app's TypeORM queries produce (captured from its query log), with the
 * dialect's identifier quotes. The one liberty: the sessions' user id is a bound parameter,
 * where TypeORM inlines it on SQLite.
 */
function statements(quote: (name: string) => string) {
  const q = quote;
  const column = (table: string, name: string) => `${q(table)}.${q(name)} AS ${q(`${table}_${name}`)}`;
  const columns = (table: string, names: string[]) => names.map((name) => column(table, name)).join(', ');
  return {
    tokenOwner:
      `SELECT ${q('user')}.${q('name')} AS ${q('name')}, ${q('user')}.${q('email')} AS ${q('email')}, ` +
      `${q('token')}.${q('user_id')} AS ${q('userId')}, ${q('user')}.${q('is_active')} AS ${q('isActive')}, ` +
      `${q('user')}.${q('deactivated_at')} AS ${q('deactivatedAt')}, ${q('user')}.${q('is_admin')} AS ${q('isAdmin')} FROM ${q('user_login_tokens')} ${q('token')} ` +
      `INNER JOIN ${q('users')} ${q('user')} ON ${q('user')}.${q('id')}=${q('token')}.${q('user_id')} ` +
      `WHERE ${q('token')}.${q('token_hash')} = ? ` +
      `AND ${q('token')}.${q('credential_generation')} = ${q('user')}.${q('credential_generation')}`,
    sessions:
      `SELECT ${columns('Session', ['id', 'user_id', 'name', 'active', 'created_at'])} ` +
      `FROM ${q('sessions')} ${q('Session')} WHERE ((${q('Session')}.${q('user_id')} = ?)) ` +
      `ORDER BY ${q('Session')}.${q('id')} ASC`,
    plugins:
      `SELECT (SELECT c.${q('plugins')} FROM ${q('catalogue_counts')} c WHERE c.${q('name')} = 'listed') AS ${q('kept_total')}, ` +
      `${PLUGIN_COLUMNS.map(q).join(', ')} FROM ${q('user_plugins')} WHERE ${q('id')} IN (SELECT ${q('id')} FROM ` +
      `(SELECT ${q('id')} FROM ${q('user_plugins')} WHERE ${q('status')} = 'approved' AND ${q('file_altered_at')} IS NULL ` +
      `ORDER BY ${q('created_at')} DESC, ${q('id')} DESC LIMIT ? OFFSET ?) AS ${q('page')}) ` +
      `ORDER BY ${q('created_at')} DESC, ${q('id')} DESC`,
    usersByKey:
      `SELECT ${columns('User', USER_COLUMNS)} FROM ${q('users')} ${q('User')} ` +
      `WHERE ((${q('User')}.${q('email_key')} = ?)) OR ((${q('User')}.${q('name_key')} = ?)) LIMIT 2`,
    deleteExpired: `DELETE FROM ${q('user_login_tokens')} WHERE (${q('user_id')} = ? AND ${q('expires_at')} < ?)`,
    insertToken:
      `INSERT INTO ${q('user_login_tokens')}(${q('user_id')}, ${q('token_hash')}, ${q('expires_at')}, ` +
      `${q('created_at')}, ${q('credential_generation')}) VALUES (?, ?, ?, ?, ?)`,
  };
}

const PLUGIN_COLUMNS = PUBLIC_VIEW_COLUMNS;

const USER_COLUMNS = [
  'id',
  'name',
  'email',
  'name_key',
  'email_key',
  'password',
  'is_active',
  'deactivated_at',
  'password_set_via_otp',
  'is_admin',
  'otp_secret_key',
  'otp_issued_at',
  'otp_failed_attempts',
  'otp_hour_start',
  'otp_hour_count',
  'otp_day_start',
  'otp_day_count',
  'locked_at',
  'credential_generation',
  'created_at',
];

/** The part of better-sqlite3 used here (its types are not installed; the app reaches it through TypeORM). */
interface SqliteStatement<Parameters extends unknown[], Row> {
  get(...parameters: Parameters): Row | undefined;
  all(...parameters: Parameters): Row[];
  run(...parameters: Parameters): unknown;
}
interface SqliteDatabase {
  pragma(source: string): unknown;
  prepare<Parameters extends unknown[], Row = unknown>(sql: string): SqliteStatement<Parameters, Row>;
  close(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Database = require('better-sqlite3') as new (path: string) => SqliteDatabase;

/** TypeORM keeps SQLite datetimes as UTC text `YYYY-MM-DD HH:MM:SS.SSS`. */
const sqliteDate = (date: Date): string => date.toISOString().replace('T', ' ').replace('Z', '');

function sqliteStore(path: string): BaselineStore {
  const db = new Database(path);
  // The app's connection settings (src/database/data-source-options.ts).
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  const sql = statements((name) => `"${name}"`);
  const prepared = {
    tokenOwner: db.prepare<[string], TokenOwnerRow>(sql.tokenOwner),
    sessions: db.prepare<[number], SessionRow>(sql.sessions),
    plugins: db.prepare<[number, number], PluginRow>(sql.plugins),
    usersByKey: db.prepare<[string, string], UserRow>(sql.usersByKey),
    deleteExpired: db.prepare<[number, string]>(sql.deleteExpired),
    insertToken: db.prepare<[number, string, string, string, number]>(sql.insertToken),
  };
  return {
    tokenOwner: async (hash) => prepared.tokenOwner.get(hash),
    sessions: async (userId) => prepared.sessions.all(userId),
    plugins: async (limit, offset) => prepared.plugins.all(limit, offset),
    usersByKey: async (key) => prepared.usersByKey.all(key, key),
    storeToken: async (userId, hash, expiresAt, now, generation) => {
      prepared.deleteExpired.run(userId, sqliteDate(now));
      prepared.insertToken.run(userId, hash, sqliteDate(expiresAt), sqliteDate(now), generation);
    },
    close: async () => db.close(),
  };
}

function mysqlStore(database: Extract<AppConfig['database'], { type: 'mysql' }>): BaselineStore {
  // The app's pool settings (src/database/data-source-options.ts).
  const pool: Pool = createPool({
    host: database.host,
    port: database.port,
    user: database.username,
    password: database.password,
    database: database.database,
    charset: 'utf8mb4_unicode_ci',
    timezone: 'Z',
    connectTimeout: 10_000,
    connectionLimit: 10,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  const sql = statements((name) => `\`${name}\``);
  const rows = async <T>(query: string, parameters: unknown[]): Promise<T[]> =>
    (await pool.query<RowDataPacket[]>(query, parameters))[0] as T[];
  return {
    tokenOwner: async (hash) => (await rows<TokenOwnerRow>(sql.tokenOwner, [hash]))[0],
    sessions: (userId) => rows<SessionRow>(sql.sessions, [userId]),
    plugins: (limit, offset) => rows<PluginRow>(sql.plugins, [limit, offset]),
    usersByKey: (key) => rows<UserRow>(sql.usersByKey, [key, key]),
    storeToken: async (userId, hash, expiresAt, now, generation) => {
      await pool.query(sql.deleteExpired, [userId, now]);
      await pool.query(sql.insertToken, [userId, hash, expiresAt, now, generation]);
    },
    close: () => pool.end(),
  };
}

/**
 * Dates as the app's views write them: MySQL gives Date objects (timezone Z); SQLite text is
 * UTC, `YYYY-MM-DD HH:MM:SS.SSS` as TypeORM writes it, put into ISO form as the app does.
 */
function isoDate(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  const text = String(value);
  if (/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/.test(text)) return `${text.slice(0, 10)}T${text.slice(11)}Z`;
  return new Date(text.replace(' ', 'T') + 'Z').toISOString();
}

const flag = (value: unknown): boolean => Boolean(Number(value));

/**
 * The headers every answer of the app carries: helmet's set, a request id and no-store. They
 * double the bytes of a small answer, and writing them is a cost of the service, not of the
 * framework, so the baseline pays it too.
 */
const SERVICE_HEADERS = { ...helmetHeaders(), 'cache-control': 'no-store' };

function sendJson(response: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  response.writeHead(status, {
    ...SERVICE_HEADERS,
    'x-request-id': randomUUID(),
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export interface BaselineServer {
  origin: string;
  close(): Promise<void>;
}

export async function startBaseline(config: AppConfig): Promise<BaselineServer> {
  const store =
    config.database.type === 'sqlite' ? sqliteStore(config.database.path) : mysqlStore(config.database);
  const hasher = new BcryptPool();
  const { secret, algorithm, expiresInSeconds } = config.jwt;
  // As src/auth/jwt-auth.guard.ts hands it to jsonwebtoken: a KeyObject, made once.
  const verifyKey = createSecretKey(Buffer.from(secret, 'utf8'));

  /** The guard: bearer token, signature and expiry, token record of the same active user. */
  async function authenticate(request: IncomingMessage): Promise<{ id: number; isAdmin: boolean } | null> {
    const parts = (request.headers.authorization ?? '').trim().split(/\s+/);
    if (parts.length !== 2 || parts[0].toLowerCase() !== 'bearer') return null;
    const token = parts[1];
    let payload: jwt.JwtPayload;
    try {
      payload = jwt.verify(token, verifyKey, { algorithms: [algorithm] }) as jwt.JwtPayload;
    } catch {
      return null;
    }
    if (typeof payload.user_id !== 'number') return null;
    const owner = await store.tokenOwner(createHash('sha256').update(token).digest('hex'));
    if (
      !owner ||
      Number(owner.userId) !== payload.user_id ||
      !flag(owner.isActive) ||
      owner.deactivatedAt !== null
    )
      return null;
    return { id: payload.user_id, isAdmin: flag(owner.isAdmin) || config.adminEmails.includes(owner.email) };
  }

  async function sessions(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const user = await authenticate(request);
    if (!user) return sendJson(response, 401, { status: 'fail', message: 'Unauthorized' });
    const rows = await store.sessions(user.id);
    sendJson(response, 200, {
      status: 'success',
      data: rows.map((row) => ({
        id: row.Session_id,
        name: row.Session_name,
        active: flag(row.Session_active),
      })),
    });
  }

  /**
   * The default catalogue page as a reader gets it: approved plugins with unaltered files,
   * newest first, in the public view (every member, in its order), with the list's kept size.
   */
  async function catalogue(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const user = await authenticate(request);
    if (!user) return sendJson(response, 401, { status: 'fail', message: 'Unauthorized' });
    const limit = 50;
    const offset = 0;
    const rows = await store.plugins(limit, offset);
    sendJson(response, 200, {
      status: 'success',
      data: {
        total: Number(rows[0]?.kept_total ?? 0),
        limit,
        offset,
        plugins: rows.map((row) => {
          const createdAt = isoDate(row.created_at);
          return {
            id: row.id,
            name: row.name,
            description: row.description,
            group: row.group,
            type: row.type,
            author: row.author,
            status: row.status,
            approval_status: row.status,
            version: row.version,
            tags: row.tags.split(',').filter((tag) => tag !== ''),
            sha256: row.sha256,
            created_at: createdAt,
            updated_at: row.updated_at === null ? createdAt : isoDate(row.updated_at),
            rating: row.ratings_count > 0 ? Math.round((row.rating_total * 10) / row.ratings_count) / 10 : 0,
            ratings_count: row.ratings_count,
          };
        }),
      },
    });
  }

  async function login(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = JSON.parse(await readBody(request)) as { emailOrUsername?: string; password?: string };
    const identifier = body.emailOrUsername;
    const password = body.password;
    if (!identifier)
      return sendJson(response, 200, { status: 'fail', message: 'Missing email or username value' });
    if (!password) return sendJson(response, 200, { status: 'fail', message: 'Missing password value' });
    const key = identityKey(identifier);
    const found = await store.usersByKey(key);
    const user = found.find((row) => row.User_email_key === key) ?? found[0];
    const matches = user?.User_password ? await hasher.compare(password, user.User_password) : false;
    const isAdmin = (row: UserRow) => flag(row.User_is_admin) || config.adminEmails.includes(row.User_email);
    if (!user || !matches || user.User_locked_at !== null)
      return sendJson(response, 200, { status: 'fail', message: 'Invalid login credentials' });
    if (isAdmin(user) && !flag(user.User_password_set_via_otp))
      return sendJson(response, 200, { status: 'fail', message: 'Invalid login credentials' });
    if (!flag(user.User_is_active) || user.User_deactivated_at !== null) {
      return sendJson(response, 200, { status: 'fail', message: 'Your account is not active' });
    }
    const now = new Date();
    const iat = Math.floor(now.getTime() / 1000);
    const payload = {
      user_id: user.User_id,
      username: user.User_name,
      iat,
      exp: iat + expiresInSeconds,
      jti: randomUUID(),
    };
    const token = jwt.sign(payload, secret, { algorithm });
    await store.storeToken(
      user.User_id,
      createHash('sha256').update(token).digest('hex'),
      new Date(payload.exp * 1000),
      now,
      Number(user.User_credential_generation),
    );
    sendJson(response, 200, { status: 'success', message: { 'jwt-token': token } });
  }

  const routes: Record<string, (request: IncomingMessage, response: ServerResponse) => Promise<void>> = {
    'GET /api/v1/sessions/': sessions,
    'GET /api/v1/community-plugins/': catalogue,
    'POST /api/v1/login/': login,
  };

  const server: Server = createServer((request, response) => {
    const route = routes[`${request.method} ${request.url}`];
    if (!route) return sendJson(response, 404, { status: 'fail', message: 'Not Found' });
    route(request, response).catch(() => {
      if (!response.headersSent) sendJson(response, 500, { status: 'fail', message: 'Internal error' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await hasher.close();
      await store.close();
    },
  };
}
