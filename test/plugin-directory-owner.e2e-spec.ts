import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PluginDirectoryClaim } from '../src/community-plugins/files/plugin-directory-claim';
import { PluginFileReconciler } from '../src/community-plugins/files/plugin-file-reconciler';
import { spawnApiProcess } from './helpers/api-process';
import type { ObservedApiProcess } from './helpers/api-process';
import { emptyDatabase, testDatabaseUrl } from './helpers/database';
import { fail } from './helpers/envelopes';
import { benignPlugin, signUpAs, upload, validFields } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { bootApp, TestApp } from './helpers/test-app';

const MARKER = '.svc-installation';
const REFUSED = fail('Plugin storage is unavailable: the plugin directory belongs to another database');

/**
 * One plugin directory, two databases: the test's database (SQLite, or MariaDB with
 * TEST_DATABASE_URL) and a SQLite database of its own. No file of either is ever removed; the
 * instance whose database does not own the directory refuses to write there and says why.
 * Every app runs with PLUGIN_FILE_GRACE_SECONDS=0, so a file it took for debris would go at once.
 */
describe('a plugin directory belongs to one database', () => {
  const smtp = new SmtpSink();
  const apps: TestApp[] = [];

  beforeAll(() => smtp.start());
  afterAll(() => smtp.stop());
  afterEach(async () => {
    for (const app of apps.splice(0).reverse()) await app.close();
  });

  const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
  const ownSqliteUrl = () => `sqlite:${join(tempDir('svc-owner-db-'), 'svc.sqlite')}`;
  async function freshTestDatabaseUrl(): Promise<string> {
    const url = testDatabaseUrl();
    await emptyDatabase(url);
    return url;
  }

  async function start(databaseUrl: string, directory: string): Promise<TestApp> {
    const app = await bootApp({
      databaseUrl,
      dataDir: tempDir('svc-owner-data-'),
      smtp,
      env: { COMMUNITY_PLUGIN_DIR: directory, PLUGIN_FILE_GRACE_SECONDS: '0' },
    });
    apps.push(app);
    return app;
  }

  async function uploadAs(app: TestApp, username: string, name: string) {
    const user = await signUpAs(app, smtp, username);
    return upload(app, user.token, { fields: validFields(name), file: benignPlugin(name) });
  }

  async function storedFiles(app: TestApp): Promise<string[]> {
    const rows = (await app.dataSource.query(
      'SELECT file_path, file_missing_at FROM user_plugins',
    )) as Array<{
      file_path: string;
      file_missing_at: unknown;
    }>;
    expect(rows.filter((row) => row.file_missing_at !== null)).toEqual([]);
    return rows.map((row) => row.file_path).sort();
  }

  async function readiness(app: TestApp) {
    const response = await app.http().get('/api/v1/health/ready');
    return { status: response.status, errors: (response.body as { errors?: Record<string, string> }).errors };
  }

  const listing = (directory: string) => readdirSync(directory).sort();

  it('the second database refuses to write or reconcile there and says why; replicas of the first share it', async () => {
    const directory = tempDir('svc-shared-plugins-');
    const first = await start(await freshTestDatabaseUrl(), directory);
    expect((await uploadAs(first, 'alice', 'First one')).status).toBe(201);
    const firstFiles = await storedFiles(first);
    expect(listing(directory)).toEqual([MARKER, ...firstFiles].sort());

    const second = await start(ownSqliteUrl(), directory);
    const refused = await uploadAs(second, 'bob', 'Second one');
    expect([refused.status, refused.body]).toEqual([503, REFUSED]);
    expect(JSON.stringify(refused.body)).not.toContain(directory);
    expect(await storedFiles(second)).toEqual([]);
    expect(await second.app.get(PluginFileReconciler).reconcile()).toEqual({
      removedFiles: [],
      removedTemporary: [],
      missing: [],
      restored: [],
      altered: [],
      unaltered: [],
      claimed: false,
    });
    const down = await readiness(second);
    expect(down.status).toBe(503);
    expect(down.errors).toEqual({
      database: 'up',
      migrations: 'up',
      plugin_directory: expect.stringMatching(
        /^down: the plugin directory belongs to another database \(installation [0-9a-f-]{36}\); give each database its own COMMUNITY_PLUGIN_DIR$/,
      ) as unknown,
      shutdown: 'up',
      startup: 'up',
    });

    // A replica of the first database: same directory, same owner.
    const replica = await start(
      first.config.database.type === 'sqlite'
        ? `sqlite:${first.config.database.path}`
        : (process.env.TEST_DATABASE_URL as string),
      directory,
    );
    expect((await readiness(replica)).status).toBe(200);
    expect((await uploadAs(replica, 'carol', 'From a replica')).status).toBe(201);
    expect((await first.app.get(PluginFileReconciler).reconcile()).removedFiles).toEqual([]);
    const both = await storedFiles(first);
    expect(both).toHaveLength(2);
    expect(listing(directory)).toEqual([MARKER, ...both].sort());
    expect((await readiness(first)).status).toBe(200);
  });

  it('two databases claiming one empty directory at once: exactly one wins', async () => {
    const directory = tempDir('svc-race-plugins-');
    // Each app claims its own directory at start-up; the race is on a third one.
    const one = await start(await freshTestDatabaseUrl(), tempDir('svc-race-a-'));
    const other = await start(ownSqliteUrl(), tempDir('svc-race-b-'));
    const claim = (app: TestApp) => {
      const claimer = app.app.get(PluginDirectoryClaim);
      Object.assign(claimer, { directory });
      return claimer.claim();
    };
    const outcomes = await Promise.allSettled([claim(one), claim(other)]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(listing(directory)).toEqual([MARKER]);
  });

  it('an install from before the marker: adopted by the database whose rows name its files; nothing is removed', async () => {
    // Two installs that shared one directory before markers existed.
    const firstUrl = await freshTestDatabaseUrl();
    const secondUrl = ownSqliteUrl();
    const shared = tempDir('svc-legacy-plugins-');
    const first = await start(firstUrl, shared);
    expect((await uploadAs(first, 'alice', 'Legacy first')).status).toBe(201);
    const secondDir = tempDir('svc-legacy-second-');
    const second = await start(secondUrl, secondDir);
    expect((await uploadAs(second, 'bob', 'Legacy second')).status).toBe(201);
    const [firstFile] = await storedFiles(first);
    const [secondFile] = await storedFiles(second);
    for (const app of apps.splice(0).reverse()) await app.close();
    unlinkSync(join(shared, MARKER));
    renameSync(join(secondDir, secondFile), join(shared, secondFile));
    // Debris of a crash from those days, and another version's temporary file.
    const old = new Date(Date.now() - 3_600_000);
    for (const name of ['orphan_0123456789abcdef.py', '.upload-0123456789abcdef.tmp']) {
      writeFileSync(join(shared, name), 'x');
      utimesSync(join(shared, name), old, old);
    }
    const before = listing(shared);

    // A database none of whose rows name a file there does not adopt it.
    const stranger = await start(ownSqliteUrl(), shared);
    const strangerDown = await readiness(stranger);
    expect([strangerDown.status, strangerDown.errors?.plugin_directory]).toEqual([
      503,
      'down: the plugin directory holds plugin files no row of this database names; give each database its own COMMUNITY_PLUGIN_DIR',
    ]);
    expect(listing(shared)).toEqual(before);

    // The first database's rows name a file there: it adopts the directory, keeping the rest.
    const firstAgain = await start(firstUrl, shared);
    expect((await readiness(firstAgain)).status).toBe(200);
    expect(await firstAgain.app.get(PluginFileReconciler).reconcile()).toEqual({
      removedFiles: [],
      removedTemporary: [],
      missing: [],
      restored: [],
      altered: [],
      unaltered: [],
      claimed: true,
    });
    expect(listing(shared)).toEqual([MARKER, ...before].sort());
    expect(await storedFiles(firstAgain)).toEqual([firstFile]);

    // The second database names a file there too, but the directory is taken now.
    const secondAgain = await start(secondUrl, shared);
    expect((await readiness(secondAgain)).status).toBe(503);
    expect((await secondAgain.app.get(PluginFileReconciler).reconcile()).claimed).toBe(false);
    expect(listing(shared)).toEqual([MARKER, ...before].sort());
    expect(await storedFiles(secondAgain)).toEqual([secondFile]);

    // Debris made after the claim is the owner's to remove, as before.
    writeFileSync(join(shared, 'later_0123456789abcdef.py'), 'x');
    expect((await firstAgain.app.get(PluginFileReconciler).reconcile()).removedFiles).toEqual([
      'later_0123456789abcdef.py',
    ]);
    expect(listing(shared)).toEqual([MARKER, ...before].sort());
    // A copy of the directory for the second database: its file is named there, so it adopts the copy.
    const copy = tempDir('svc-legacy-copy-');
    for (const name of before) copyFileSync(join(shared, name), join(copy, name));
    const secondOwn = await start(secondUrl, copy);
    expect((await readiness(secondOwn)).status).toBe(200);
    expect((await secondOwn.app.get(PluginFileReconciler).reconcile()).removedFiles).toEqual([]);
  });

  it('as real processes: the second one starts, and its start-up line says it is not ready and why', async () => {
    const directory = tempDir('svc-process-plugins-');
    const processes: ObservedApiProcess[] = [];
    const spawn = async (databaseUrl: string) => {
      const api = await spawnApiProcess({
        DATABASE_URL: databaseUrl,
        COMMUNITY_PLUGIN_DIR: directory,
        PLUGIN_FILE_GRACE_SECONDS: '0',
        LOG_LEVEL: 'info',
      });
      processes.push(api);
      await api.waitForOutput(/svc-api listening on/);
      return api;
    };
    try {
      const first = await spawn(await freshTestDatabaseUrl());
      const second = await spawn(ownSqliteUrl());
      const line = second
        .stdout()
        .split('\n')
        .find((text) => text.includes('svc-api listening on'));
      expect(JSON.parse(line!)).toMatchObject({
        level: 50,
        context: 'Main',
        msg: expect.stringMatching(
          new RegExp(
            `^svc-api listening on http://\\S+ \\(SQLite \\S+\\), NOT READY: COMMUNITY_PLUGIN_DIR ${directory} belongs to another database \\(installation [0-9a-f-]{36}; this database is [0-9a-f-]{36}\\): no plugin file is written or removed there; give each database its own COMMUNITY_PLUGIN_DIR$`,
          ),
        ) as unknown,
      });
      expect(first.stdout()).toMatch(/svc-api listening on \S+ \(.+\) after \d+ ms/);
      expect(first.stdout()).not.toMatch(/NOT READY/);
      expect(listing(directory)).toEqual([MARKER]);
    } finally {
      for (const api of processes) {
        api.child.kill('SIGTERM');
        await api.exited;
      }
    }
  }, 60_000);
});
