import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Response } from 'supertest';
import { CLAIM_MARKER } from '../../src/community-plugins/files/plugin-directory-claim';
import { login, registerAndActivate, STRONG_PASSWORD } from './accounts';
import type { TestUser } from './accounts';
import type { SmtpSink } from './smtp-sink';
import { runSvcAdmin, type CliResult } from './svc-admin';
import { createTestApp, TEST_JWT_SECRET } from './test-app';
import type { TestApp } from './test-app';

export const FIXTURES = join(__dirname, '../fixtures/marketplace');

/** The members of each plugin view, sorted: what a public caller, the owner and an admin see. */
export const PUBLIC_VIEW_KEYS = [
  'approval_status',
  'author',
  'created_at',
  'description',
  'group',
  'id',
  'name',
  'rating',
  'ratings_count',
  'sha256',
  'status',
  'tags',
  'type',
  'updated_at',
  'version',
];
export const OWNER_VIEW_KEYS = [...PUBLIC_VIEW_KEYS, 'rejection_reason', 'user_id'].sort();
export const ADMIN_VIEW_KEYS = [
  ...OWNER_VIEW_KEYS,
  'execution_timeout',
  'file_altered',
  'file_missing',
  'pending_version',
  'recheck_findings',
  'recheck_rules_version',
  'reviewed_at',
  'reviewed_by_user_id',
].sort();
export const BENIGN_SOURCE = readFileSync(join(FIXTURES, 'title_finder.py'));
export const HOSTILE_SOURCE = readFileSync(join(FIXTURES, 'shell_runner.py'));
/** An ordinary plugin rules v8 accepted that the plugin profile (issue 42) refuses: a logging Handler subclass. */
export const OUTSIDE_PROFILE_SOURCE = readFileSync(join(FIXTURES, 'outside_profile.py'));

/** A benign plugin with its own text, so each upload has its own hash. */
export function benignPlugin(description = 'Reports page titles'): Buffer {
  return Buffer.from(
    `DESCRIPTION = ${JSON.stringify(description)}\n\n\ndef run(PluginInfo):\n    return []\n`,
  );
}

/** A benign plugin padded with a comment to exactly `size` bytes. */
export function benignPluginOfSize(size: number): Buffer {
  const head = benignPlugin('Padded');
  const padding = size - head.length - 3;
  if (padding < 0) throw new Error(`a plugin cannot be as small as ${size} bytes`);
  return Buffer.concat([head, Buffer.from(`#${'x'.repeat(padding)}\n\n`)]).subarray(0, size);
}

export interface SignedInUser extends TestUser {
  id: number;
  token: string;
}

/** Registered, activated and logged in under the given name and email (admins need a known email). */
export async function signUpAs(t: TestApp, smtp: SmtpSink, username: string): Promise<SignedInUser> {
  const user: TestUser = { username, email: `${username}@example.com`, password: STRONG_PASSWORD };
  await registerAndActivate(t, smtp, user);
  return signedIn(t, user);
}

/** Logs `user` in and reads its id from `community-plugins/me/`. */
export async function signedIn(t: TestApp, user: TestUser): Promise<SignedInUser> {
  const token = await login(t, user);
  const me = await t
    .http()
    .get('/api/v1/community-plugins/me/')
    .set('Authorization', `Bearer ${token}`)
    .expect(200);
  return { ...user, token, id: (me.body as { data: { id: number } }).data.id };
}

/**
 * The marketplace suites' app: boss and chief are admins (SVC_ADMIN_EMAILS), the pending cap is
 * one no test meets, and `names` are signed up, in order.
 */
export async function marketplaceApp<Name extends string>(
  smtp: SmtpSink,
  names: readonly Name[],
): Promise<{ t: TestApp; users: Record<Name, SignedInUser> }> {
  const t = await createTestApp({
    smtp,
    env: { SVC_ADMIN_EMAILS: 'boss@example.com,chief@example.com', PLUGIN_MAX_PENDING_PER_USER: '1000' },
  });
  const users = {} as Record<Name, SignedInUser>;
  for (const name of names) users[name] = await signUpAs(t, smtp, name);
  return { t, users };
}

export interface UploadOptions {
  fields?: Record<string, string>;
  file?: Buffer;
  filename?: string;
  /** Parts after the file instead of before it. */
  fieldsLast?: boolean;
}

export const validFields = (name: string): Record<string, string> => ({
  name,
  description: `The ${name} plugin`,
  group: 'web',
  type: 'passive',
  author: 'Alice Example',
});

export function upload(t: TestApp, token: string, options: UploadOptions = {}) {
  const {
    fields = validFields('Title finder'),
    file = BENIGN_SOURCE,
    filename = 'title_finder.py',
  } = options;
  let call = t.http().post('/api/v1/community-plugins/upload').set('Authorization', `Bearer ${token}`);
  const addFields = () => {
    for (const [key, value] of Object.entries(fields)) call = call.field(key, value);
  };
  if (!options.fieldsLast) addFields();
  call = call.attach('plugin_file', file, { filename, contentType: 'text/x-python' });
  if (options.fieldsLast) addFields();
  return call;
}

/** The plugin directory's entries but its owner's marker (see plugin-directory-claim.ts), sorted. */
export function pluginFiles(directory: string): string[] {
  return readdirSync(directory)
    .filter((name) => name !== CLAIM_MARKER)
    .sort();
}

/** What a failed upload must not leave behind: rows, or files (temporary ones included). */
export async function pluginState(t: TestApp): Promise<{ rows: number; files: string[] }> {
  const [row] = (await t.dataSource.query('SELECT COUNT(*) AS count FROM user_plugins')) as Array<{
    count: unknown;
  }>;
  let files: string[] = [];
  try {
    files = pluginFiles(t.config.communityPluginDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return { rows: Number(row.count), files };
}

/** The URL a test app's database can be reached at again, by another app or process. */
export function databaseUrlOf(t: TestApp): string {
  const database = t.config.database;
  if (database.type === 'sqlite') return `sqlite:${database.path}`;
  const auth = `${encodeURIComponent(database.username)}${database.password ? `:${encodeURIComponent(database.password)}` : ''}`;
  return `mysql://${auth}@${database.host}:${database.port}/${database.database}`;
}

/** svc-admin as a process on a test app's database and plugin directory. */
export function svcAdminOn(t: TestApp, args: string[]): Promise<CliResult> {
  return runSvcAdmin(args, {
    DATABASE_URL: databaseUrlOf(t),
    JWT_SECRET: TEST_JWT_SECRET,
    PLUGIN_MANIFEST_KEY: t.config.pluginManifestKey,
    COMMUNITY_PLUGIN_DIR: t.config.communityPluginDir,
  });
}

/** The catalogue's kept counts (catalogue_counts) beside the same lists counted from the rows. */
export async function catalogueCounts(
  t: TestApp,
): Promise<{ kept: Record<string, number>; counted: Record<string, number> }> {
  const kept = (await t.dataSource.query(
    'SELECT name, plugins FROM catalogue_counts ORDER BY name',
  )) as Array<{
    name: string;
    plugins: unknown;
  }>;
  return {
    kept: Object.fromEntries(kept.map((row) => [row.name, Number(row.plugins)])),
    counted: {
      approved: await countPlugins(t, "status = 'approved'"),
      listed: await countPlugins(t, "status = 'approved' AND file_altered_at IS NULL"),
    },
  };
}

/** How many plugin rows match a WHERE clause (the test's own SQL, never input). */
export async function countPlugins(t: TestApp, where: string): Promise<number> {
  const [row] = (await t.dataSource.query(`SELECT COUNT(*) AS n FROM user_plugins WHERE ${where}`)) as Array<{
    n: unknown;
  }>;
  return Number(row.n);
}

/** A request sent once another has been: chains like a supertest request (`.expect(200)`, `await`). */
export interface SentAfter extends PromiseLike<Response> {
  expect(status: number): Promise<Response>;
}

/**
 * Approve as an admin does: fetch the source approve would act on (which records the read),
 * then approve without a body, as the spec and the original web client send it. The read's
 * own answer is not checked: a test of a broken file expects approve's refusal of it.
 */
export function readThenApprove(t: TestApp, token: string, id: number | string): SentAfter {
  const send = async (status?: number): Promise<Response> => {
    await t.http().get(`/api/v1/community-plugins/${id}/source/`).set('Authorization', `Bearer ${token}`);
    const call = t
      .http()
      .post(`/api/v1/community-plugins/${id}/approve/`)
      .set('Authorization', `Bearer ${token}`);
    return status === undefined ? await call : await call.expect(status);
  };
  return {
    expect: (status) => send(status),
    then: (fulfilled, rejected) => send().then(fulfilled, rejected),
  };
}
