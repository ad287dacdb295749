import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DataSource } from 'typeorm';
import { createConnection } from 'mysql2/promise';
import { loadConfig } from '../src/config/app-config';
import { dataSourceOptions } from '../src/database/data-source-options';
import { LOCK_TABLE } from '../src/database/named-lock';
import { emptyDatabase } from './helpers/database';
import { SmtpSink } from './helpers/smtp-sink';
import { runSvcAdmin, type CliResult } from './helpers/svc-admin';
import { bootApp, TEST_JWT_SECRET, type TestApp } from './helpers/test-app';
import {
  benignPlugin,
  databaseUrlOf,
  marketplaceApp,
  pluginFiles,
  readThenApprove,
  upload,
  validFields,
  type SignedInUser,
} from './helpers/marketplace';

// Every svc-admin run is a Node process that loads Nest and opens the database: about 2 s.
jest.setTimeout(180_000);

const ROOT = join(__dirname, '..');
const sha256 = (content: Buffer) => createHash('sha256').update(content).digest('hex');

/** A database of the same kind as the test app's, empty: a new SQLite file, or `<test database>_restore` emptied. */
async function emptyRestoreTarget(t: TestApp): Promise<{ url: string; pluginDir: string }> {
  const pluginDir = join(mkdtempSync(join(tmpdir(), 'svc-restore-')), 'plugins');
  const database = t.config.database;
  if (database.type === 'sqlite')
    return { url: `sqlite:${join(dirname(pluginDir), 'restored.sqlite')}`, pluginDir };
  const name = `${database.database}_restore`;
  const connection = await createConnection({
    host: database.host,
    port: database.port,
    user: database.username,
    password: database.password,
  });
  await connection.query(`CREATE DATABASE IF NOT EXISTS \`${name}\``);
  await connection.end();
  const url = databaseUrlOf(t).replace(/\/[^/]+$/, `/${name}`);
  await emptyDatabase(url);
  return { url, pluginDir };
}

/** svc-admin with the settings of a service on `url` and `pluginDir`, and the test app's secrets. */
const svcAdmin = (t: TestApp, url: string, pluginDir: string, args: string[]): Promise<CliResult> =>
  runSvcAdmin(args, {
    DATABASE_URL: url,
    JWT_SECRET: TEST_JWT_SECRET,
    PLUGIN_MANIFEST_KEY: t.config.pluginManifestKey,
    COMMUNITY_PLUGIN_DIR: pluginDir,
  });
const onApp = (t: TestApp, args: string[]) =>
  svcAdmin(t, databaseUrlOf(t), t.config.communityPluginDir, args);

/** A data source of its own on `url`: the rows as the database holds them, no app in between. */
async function openDatabase(url: string): Promise<DataSource> {
  const { database } = loadConfig({ DATABASE_URL: url, JWT_SECRET: TEST_JWT_SECRET });
  return new DataSource(dataSourceOptions(database, 5000)).initialize();
}

const tablesOf = async (dataSource: DataSource): Promise<string[]> =>
  (
    (await dataSource.query(
      dataSource.options.type === 'mysql'
        ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"
        : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )) as Array<{ name: string }>
  )
    .map((row) => row.name)
    .sort();

/** Every row of every table (the lock leases excepted), each table's rows in a stable order. */
async function allRows(dataSource: DataSource): Promise<Record<string, string[]>> {
  const tables = (await tablesOf(dataSource)).filter((name) => name !== LOCK_TABLE);
  const rows: Record<string, string[]> = {};
  for (const table of tables) {
    const found = (await dataSource.query(`SELECT * FROM \`${table}\``)) as unknown[];
    rows[table] = found.map((row) => JSON.stringify(row)).sort();
  }
  return rows;
}

/** The plugin directory's files (its owner's marker aside) with their bytes' digests. */
const filesOf = (directory: string): Record<string, string> =>
  Object.fromEntries(
    pluginFiles(directory).map((name) => [name, sha256(readFileSync(join(directory, name)))]),
  );

const backupLine = (t: TestApp, directory: string, plugins: number, files: number) =>
  `Backed up ${databaseUrlOf(t)} and ${plugins} plugin file(s) to ${directory} (${files} files with their sha256 in manifest.json, then BACKUP-COMPLETE)\n`;
const SECRETS_WARNING = (directory: string) =>
  `Warning: ${directory} holds the service's secrets (JWT_SECRET and PLUGIN_MANIFEST_KEY in secrets/): keep it as safe as the service’s own environment\n`;
const notComplete = (directory: string) =>
  `${directory} is not a complete backup: it has no BACKUP-COMPLETE (a backup that was stopped leaves such a directory); take another backup\n`;

/**
 * svc-admin backup and restore (docs/operations.md#backup-and-restore), on SQLite and on
 * MariaDB (TEST_DATABASE_URL): a backup of a quiet service restores row for row and file for
 * file; one taken during a burst of uploads and approvals is a consistent snapshot; one killed
 * at any step leaves nothing restore accepts; restore refuses a non-empty target and a changed
 * backup.
 */
describe('svc-admin backup and restore', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let boss: SignedInUser;
  const work = mkdtempSync(join(tmpdir(), 'svc-backups-'));
  let count = 0;
  const newBackupPath = () => join(work, `backup-${(count += 1)}`);

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, bob, boss },
    } = await marketplaceApp(smtp, ['alice', 'bob', 'boss']));
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const uploaded = async (user: SignedInUser, name: string): Promise<number> => {
    const response = await upload(t, user.token, {
      fields: validFields(name),
      file: benignPlugin(`${name} by ${user.username}`),
      filename: 'plugin.py',
    }).expect(201);
    return (response.body as { data: { id: number } }).data.id;
  };

  it('restores a quiet service row for row and file for file; audit and plugins verify pass; the API serves it as it was', async () => {
    const approved = await uploaded(alice, 'Backup approved');
    const rejected = await uploaded(bob, 'Backup rejected');
    await uploaded(alice, 'Backup pending');
    await readThenApprove(t, boss.token, approved).expect(200);
    await t
      .http()
      .post(`/api/v1/community-plugins/${rejected}/reject/`)
      .set('Authorization', `Bearer ${boss.token}`)
      .send({ reason: 'Not today' })
      .expect(200);
    await t
      .http()
      .put(`/api/v1/community-plugins/${approved}/rating/`)
      .set('Authorization', `Bearer ${bob.token}`)
      .send({ stars: 4 })
      .expect(200);
    await t.deliverMail();
    const rowsAtBackup = await allRows(t.dataSource);
    const filesAtBackup = filesOf(t.config.communityPluginDir);
    const catalogue = await t
      .http()
      .get('/api/v1/community-plugins/')
      .set('Authorization', `Bearer ${bob.token}`);

    const directory = newBackupPath();
    const backup = await onApp(t, ['backup', directory]);
    const pluginCount = Object.keys(filesAtBackup).length;
    expect(backup).toEqual({
      code: 0,
      // The database, every plugin file, two secrets.
      stdout: backupLine(t, directory, pluginCount, 1 + pluginCount + 2),
      stderr: SECRETS_WARNING(directory),
    });

    const target = await emptyRestoreTarget(t);
    const restore = await svcAdmin(t, target.url, target.pluginDir, ['restore', directory]);
    const manifest = JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8')) as {
      created_at: string;
    };
    expect(restore).toEqual({
      code: 0,
      stdout:
        `Restored the backup of ${manifest.created_at} into ${target.url} and ${pluginCount} plugin file(s) into ${target.pluginDir}\n` +
        `Audit log: ${rowsAtBackup.audit_log.length} entries, chain intact\n` +
        'Plugins: 1 approved plugin file(s) match their digests\n',
      stderr: '',
    });

    const restored = await openDatabase(target.url);
    try {
      expect(await allRows(restored)).toEqual(rowsAtBackup);
    } finally {
      await restored.destroy();
    }
    expect(filesOf(target.pluginDir)).toEqual(filesAtBackup);
    expect(await svcAdmin(t, target.url, target.pluginDir, ['audit', 'verify'])).toEqual({
      code: 0,
      stdout: `${rowsAtBackup.audit_log.length} entries, chain intact\n`,
      stderr: '',
    });
    expect(await svcAdmin(t, target.url, target.pluginDir, ['plugins', 'verify'])).toEqual({
      code: 0,
      stdout: `1 approved plugin file(s) in ${target.pluginDir} match their digests\n`,
      stderr: '',
    });

    // The API on the restored copy: the same catalogue, and the accounts log in with their passwords.
    const copy = await bootApp({
      databaseUrl: target.url,
      dataDir: dirname(target.pluginDir),
      smtp,
      env: { PLUGIN_MANIFEST_KEY: t.config.pluginManifestKey, COMMUNITY_PLUGIN_DIR: target.pluginDir },
    });
    try {
      const again = await copy
        .http()
        .get('/api/v1/community-plugins/')
        .set('Authorization', `Bearer ${bob.token}`);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(catalogue.body);
      const login = await copy
        .http()
        .post('/api/v1/login/')
        .send({ emailOrUsername: alice.username, password: alice.password });
      expect((login.body as { message: string }).message).toHaveProperty('jwt-token');
      const source = await copy
        .http()
        .get(`/api/v1/community-plugins/${approved}/source/`)
        .set('Authorization', `Bearer ${boss.token}`);
      expect(source.status).toBe(200);
      const ready = await copy.http().get('/api/v1/health/ready');
      expect(ready.status).toBe(200);
    } finally {
      await copy.close();
    }
  });

  it('a backup during a burst of uploads and approvals restores a consistent snapshot', async () => {
    const waiting: number[] = [];
    for (let index = 0; index < 6; index += 1) waiting.push(await uploaded(bob, `Burst waiting ${index}`));
    const directory = newBackupPath();
    const [backup] = await Promise.all([
      onApp(t, ['backup', directory]),
      ...waiting.map((id) => readThenApprove(t, boss.token, id).expect(200)),
      ...Array.from({ length: 8 }, (_, index) =>
        uploaded(index % 2 === 0 ? alice : bob, `Burst new ${index}`),
      ),
    ]);
    expect(backup.code).toBe(0);

    const target = await emptyRestoreTarget(t);
    const restore = await svcAdmin(t, target.url, target.pluginDir, ['restore', directory]);
    expect(restore.code).toBe(0);
    expect(restore.stderr).toBe('');
    expect((await svcAdmin(t, target.url, target.pluginDir, ['audit', 'verify'])).code).toBe(0);
    expect((await svcAdmin(t, target.url, target.pluginDir, ['plugins', 'verify'])).code).toBe(0);

    const restored = await openDatabase(target.url);
    try {
      // Every row's file is there with the digest the row records.
      const named = (await restored.query(
        'SELECT file_path, sha256 FROM user_plugins UNION ALL SELECT file_path, sha256 FROM plugin_versions',
      )) as Array<{ file_path: string; sha256: string }>;
      for (const row of named) {
        expect(sha256(readFileSync(join(target.pluginDir, row.file_path)))).toBe(row.sha256);
      }
      // The audit log is the source's, up to a point: a prefix of its chain.
      const audit = (db: DataSource) =>
        db.query('SELECT seq, action, subject, hash FROM audit_log ORDER BY seq') as Promise<
          Array<{ seq: unknown; action: string; subject: string; hash: string }>
        >;
      const restoredAudit = await audit(restored);
      const sourceAudit = await audit(t.dataSource);
      expect(restoredAudit).toEqual(sourceAudit.slice(0, restoredAudit.length));
      // Rows and audit entries from one moment: each plugin has its upload entry, and each
      // approved one of the burst its approval, and no entry names a row the copy lacks.
      const plugins = (await restored.query('SELECT id, status FROM user_plugins')) as Array<{
        id: unknown;
        status: string;
      }>;
      const subjects = (action: string) =>
        restoredAudit
          .filter((entry) => entry.action === action)
          .map((entry) => entry.subject)
          .sort();
      expect(subjects('upload')).toEqual(plugins.map((plugin) => `plugin:${Number(plugin.id)}`).sort());
      expect(subjects('approve')).toEqual(
        plugins
          .filter((plugin) => plugin.status === 'approved')
          .map((plugin) => `plugin:${Number(plugin.id)}`)
          .sort(),
      );
      expect(filesOf(target.pluginDir)).toEqual(
        Object.fromEntries(named.map((row) => [row.file_path, row.sha256])),
      );
    } finally {
      await restored.destroy();
    }
  });

  /** svc-admin backup preloaded with test/helpers/stop-at.js: it stops itself at `step`, and is killed there. */
  async function killedAt(step: string, directory: string): Promise<void> {
    const child = spawn(
      process.execPath,
      [
        '--require',
        join(ROOT, 'test/helpers/stop-at.js'),
        join(ROOT, 'bin/svc-admin.js'),
        'backup',
        directory,
      ],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          SVC_TEST_STOP_AT: step,
          DATABASE_URL: databaseUrlOf(t),
          JWT_SECRET: TEST_JWT_SECRET,
          PLUGIN_MANIFEST_KEY: t.config.pluginManifestKey,
          COMMUNITY_PLUGIN_DIR: t.config.communityPluginDir,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes(`stopped at ${step}\n`)) resolve();
      });
      child.on('exit', () => reject(new Error(`svc-admin exited before ${step}: ${stderr}`)));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
  }

  it.each(['plugins', 'manifest', 'rename', 'marker'])(
    'a backup killed with kill -9 at %s leaves no directory restore accepts',
    async (step) => {
      await uploaded(alice, `Killed at ${step}`);
      const parent = mkdtempSync(join(work, 'killed-'));
      const directory = join(parent, 'backup');
      await killedAt(step, directory);
      const left = readdirSync(parent);
      // Before the rename only the hidden working directory is there; after it, the backup without its marker.
      expect(left).toHaveLength(1);
      expect(left[0]).toMatch(step === 'marker' ? /^backup$/ : /^\.backup\.incomplete-[0-9a-f]{12}$/);
      const target = await emptyRestoreTarget(t);
      for (const name of left) {
        const restore = await svcAdmin(t, target.url, target.pluginDir, ['restore', join(parent, name)]);
        expect(restore).toEqual({ code: 1, stdout: '', stderr: notComplete(join(parent, name)) });
      }
      // The name asked for: not there before the rename, there without its marker after it.
      expect(await svcAdmin(t, target.url, target.pluginDir, ['restore', directory])).toEqual({
        code: 1,
        stdout: '',
        stderr:
          step === 'marker' ? notComplete(directory) : `${directory} is not a backup directory (ENOENT)\n`,
      });
      expect(existsSync(target.pluginDir)).toBe(false);
    },
  );

  describe('refusals', () => {
    let directory: string;
    beforeAll(async () => {
      await uploaded(alice, 'Refusals');
      directory = newBackupPath();
      const backup = await onApp(t, ['backup', directory]);
      if (backup.code !== 0) throw new Error(`svc-admin backup failed: ${backup.stderr}`);
    });

    it('backs up only into a new directory', async () => {
      expect(await onApp(t, ['backup', directory])).toEqual({
        code: 1,
        stdout: '',
        stderr: `${directory} already exists: a backup goes into a new directory\n`,
      });
    });

    it('backs up only a database with the service’s tables', async () => {
      const target = await emptyRestoreTarget(t);
      const into = newBackupPath();
      expect(await svcAdmin(t, target.url, target.pluginDir, ['backup', into])).toEqual({
        code: 1,
        stdout: '',
        stderr: `Database ${target.url} has no svc-api tables: there is nothing to back up\n`,
      });
      expect(existsSync(into)).toBe(false);
    });

    it('refuses a backup of a newer schema than it knows', async () => {
      const newer = join(work, 'newer-schema');
      cpSync(directory, newer, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(newer, 'manifest.json'), 'utf8')) as {
        database: { migrations: string[] };
      };
      manifest.database.migrations.push('FromTheFuture9999999999999');
      const text = JSON.stringify(manifest);
      writeFileSync(join(newer, 'manifest.json'), text);
      writeFileSync(join(newer, 'BACKUP-COMPLETE'), `${sha256(Buffer.from(text))}\n`);
      const target = await emptyRestoreTarget(t);
      expect(await svcAdmin(t, target.url, target.pluginDir, ['restore', newer])).toEqual({
        code: 1,
        stdout: '',
        stderr: `${newer} has a newer schema than this svc-admin knows (migration FromTheFuture9999999999999): restore with the version that made it\n`,
      });
    });

    it('restores only into an empty database and an empty plugin directory', async () => {
      const tables = (await tablesOf(t.dataSource)).length;
      const intoSource = await onApp(t, ['restore', directory]);
      expect(intoSource).toEqual({
        code: 1,
        stdout: '',
        stderr: `Database ${databaseUrlOf(t)} is not empty (${tables} tables): restore goes only into an empty database\n`,
      });
      const target = await emptyRestoreTarget(t);
      mkdirSync(target.pluginDir, { recursive: true });
      writeFileSync(join(target.pluginDir, 'left-over.py'), 'x = 1\n');
      expect(await svcAdmin(t, target.url, target.pluginDir, ['restore', directory])).toEqual({
        code: 1,
        stdout: '',
        stderr: `COMMUNITY_PLUGIN_DIR ${target.pluginDir} is not empty (1 entries): restore goes only into an empty plugin directory\n`,
      });
    });

    it('refuses a backup changed after it was made, before writing anything', async () => {
      const manifest = JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8')) as {
        plugin_files: Array<{ name: string }>;
        files: Record<string, { sha256: string; bytes: number }>;
      };
      const file = `plugins/${manifest.plugin_files[0].name}`;
      const changedCopy = join(work, 'changed-plugin');
      cpSync(directory, changedCopy, { recursive: true });
      const original = readFileSync(join(changedCopy, file));
      const changed = Buffer.concat([original.subarray(0, original.length - 1), Buffer.from('#')]);
      writeFileSync(join(changedCopy, file), changed);
      const target = await emptyRestoreTarget(t);
      expect(await svcAdmin(t, target.url, target.pluginDir, ['restore', changedCopy])).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `${changedCopy} was changed or damaged after it was made: ${file} has sha256 ${sha256(changed)} (${changed.length} bytes), ` +
          `the manifest says ${manifest.files[file].sha256} (${manifest.files[file].bytes} bytes); restore refuses it\n`,
      });

      const extraCopy = join(work, 'extra-file');
      cpSync(directory, extraCopy, { recursive: true });
      writeFileSync(join(extraCopy, 'plugins', 'extra.py'), 'x = 1\n');
      expect((await svcAdmin(t, target.url, target.pluginDir, ['restore', extraCopy])).stderr).toBe(
        `${extraCopy} was changed or damaged after it was made: plugins/extra.py is not in the manifest; restore refuses it\n`,
      );

      const manifestCopy = join(work, 'changed-manifest');
      cpSync(directory, manifestCopy, { recursive: true });
      writeFileSync(join(manifestCopy, 'manifest.json'), JSON.stringify({ ...manifest, files: {} }));
      expect((await svcAdmin(t, target.url, target.pluginDir, ['restore', manifestCopy])).stderr).toBe(
        `${manifestCopy} was changed or damaged after it was made: manifest.json does not match the digest in BACKUP-COMPLETE; restore refuses it\n`,
      );
      // Nothing was written: the target is still empty.
      expect(existsSync(target.pluginDir)).toBe(false);
      const restored = await openDatabase(target.url);
      try {
        expect(Object.keys(await allRows(restored))).toEqual([]);
      } finally {
        await restored.destroy();
      }
    });
  });
});
