import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DataSource, Table } from 'typeorm';
import { login } from './helpers/accounts';
import { SmtpSink } from './helpers/smtp-sink';
import { bootApp, createTestApp, TestApp } from './helpers/test-app';
import {
  benignPlugin,
  databaseUrlOf,
  SignedInUser,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';

type Row = Record<string, unknown>;

const PLUGIN_COLUMNS = [
  'id',
  'name',
  'description',
  'group',
  'type',
  'author',
  'status',
  'rejection_reason',
  'user_id',
  'reviewed_by_user_id',
  'reviewed_at',
  'execution_timeout',
  'sha256',
  'file_path',
  'created_at',
  'updated_at',
  'version',
  'tags',
  'file_missing_at',
  'pending_version',
  'rating_total',
  'ratings_count',
  'file_altered_at',
  'name_key',
];
const OLD_PLUGIN_COLUMNS = [
  'id',
  'name',
  'description',
  'group',
  'type',
  'author',
  'status',
  'user_id',
  'file_path',
  'created_at',
];
const ADDED_PLUGIN_COLUMNS = PLUGIN_COLUMNS.filter((column) => !OLD_PLUGIN_COLUMNS.includes(column));

const isSqlite = (dataSource: DataSource) => dataSource.options.type === 'better-sqlite3';

interface ColumnShape {
  name: string;
  nullable: boolean;
  default: string | null;
}

/** Each column's name, nullability and default, in table order, the same way on both databases. */
async function columnsOf(dataSource: DataSource, table: string): Promise<ColumnShape[]> {
  if (isSqlite(dataSource)) {
    const rows = (await dataSource.query(`PRAGMA table_info("${table}")`)) as Array<{
      name: string;
      notnull: number;
      dflt_value: string | null;
    }>;
    return rows.map((row) => ({
      name: row.name,
      nullable: row.notnull === 0,
      default: normalizeDefault(row.dflt_value),
    }));
  }
  const rows = (await dataSource.query(
    `SELECT COLUMN_NAME AS name, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS dflt
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
    [table],
  )) as Array<{ name: string; nullable: string; dflt: string | null }>;
  return rows.map((row) => ({
    name: row.name,
    nullable: row.nullable === 'YES',
    default: normalizeDefault(row.dflt),
  }));
}

/**
 * SQLite keeps `(300)`, `('pending')` and `(false)`, MariaDB `300`, `'pending'`, `0` or `NULL`:
 * compare the values (in SQLite `false` is the integer 0, as in MariaDB).
 */
function normalizeDefault(value: string | null): string | null {
  if (value === null || value === 'NULL') return null;
  const bare = value.replace(/^\((.*)\)$/, '$1').replace(/^'(.*)'$/, '$1');
  return ({ false: '0', true: '1' } as Record<string, string>)[bare.toLowerCase()] ?? bare;
}

/** Everything about the schema a second start could change: columns with types, indexes, foreign keys. */
async function schemaSnapshot(dataSource: DataSource): Promise<unknown> {
  if (isSqlite(dataSource)) {
    return dataSource.query(
      `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name`,
    );
  }
  return {
    columns: await dataSource.query(
      `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, ORDINAL_POSITION
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    ),
    indexes: await dataSource.query(
      `SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX, NON_UNIQUE
         FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
    ),
    foreignKeys: await dataSource.query(
      `SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME
         FROM information_schema.KEY_COLUMN_USAGE
        WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY TABLE_NAME, CONSTRAINT_NAME`,
    ),
  };
}

/** Every row of the table in a comparable form (dates as text, numbers as numbers). */
async function rowsOf(dataSource: DataSource, table: string): Promise<Row[]> {
  const rows = (await dataSource.query(`SELECT * FROM ${table} ORDER BY id`)) as Row[];
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        value instanceof Date ? value.toISOString() : typeof value === 'bigint' ? Number(value) : value,
      ]),
    ),
  );
}

const pick = (row: Row, columns: string[]) =>
  Object.fromEntries(columns.map((column) => [column, row[column]]));

describe('schema upgrade at start-up', () => {
  const smtp = new SmtpSink();
  beforeAll(() => smtp.start());
  afterAll(() => smtp.stop());
  afterEach(() => jest.restoreAllMocks());

  /** A fresh install with two users, one plugin uploaded and approved. */
  async function installWithData(): Promise<{ t: TestApp; alice: SignedInUser; admin: SignedInUser }> {
    const t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'root@example.com' } });
    const alice = await signUpAs(t, smtp, 'alice');
    const admin = await signUpAs(t, smtp, 'root');
    const response = await upload(t, alice.token, {
      fields: validFields('Fresh plugin'),
      file: benignPlugin('fresh'),
    });
    expect(response.status).toBe(201);
    return { t, alice, admin };
  }

  function addedColumnLogs(logs: jest.SpyInstance): string[] {
    return logs.mock.calls
      .map(([message]) => String(message))
      .filter((message) => message.startsWith('Added column'));
  }

  it('brings an old plugin table and a users table without is_admin up to date, keeps every row, and a second start changes nothing', async () => {
    const { t, alice, admin } = await installWithData();
    const url = databaseUrlOf(t);
    const dataDir = dirname(t.config.communityPluginDir);
    const freshPluginColumns = await columnsOf(t.dataSource, 'user_plugins');
    const freshUserColumns = await columnsOf(t.dataSource, 'users');
    expect(freshPluginColumns.map((column) => column.name)).toEqual(PLUGIN_COLUMNS);

    // An install from before: the plugin table in its old shape, holding rows, recorded as
    // migrated or not at all, and a users table from before admins existed.
    const runner = t.dataSource.createQueryRunner();
    // The lifecycle tables (versions, ratings, the audit log), the re-checks, the catalogue's
    // search and tag index, the test-runs and the access tokens did not exist yet either (and MariaDB drops no
    // table another one's foreign key names).
    for (const table of [
      'personal_access_tokens',
      'plugin_test_runs',
      'plugin_version_reads',
      'plugin_rechecks',
      'plugin_version_approvals',
      'plugin_versions',
      'plugin_ratings',
      'audit_log',
      'audit_chain',
      'plugin_runs',
      'plugin_grams',
      'plugin_tags',
      'plugin_search',
    ]) {
      await runner.dropTable(table);
    }
    for (const migration of [
      'PluginLifecycle1763692000000',
      'CreatePluginRechecks1763693000000',
      'CatalogueSearchIndex1763694000000',
      'CatalogueSearchRuns1763699400000',
      'PluginVersionReads1763701000000',
      'CreatePluginTestRuns1763703000000',
      'PluginTestRunSummary1763704000000',
      'CreatePersonalAccessTokens1763706000000',
      // The versions' warnings column: its table is dropped above, so its migration runs again.
      'PluginVersionWarnings1763709000000',
    ]) {
      await t.dataSource.query('DELETE FROM migrations WHERE name = ?', [migration]);
    }
    await runner.dropTable('user_plugins');
    await runner.createTable(
      new Table({
        name: 'user_plugins',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'name', type: 'varchar', length: '128', isUnique: true },
          { name: 'description', type: 'text' },
          { name: 'group', type: 'varchar', length: '16' },
          { name: 'type', type: 'varchar', length: '16' },
          { name: 'author', type: 'varchar', length: '128' },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'user_id', type: 'integer' },
          { name: 'file_path', type: 'varchar', length: '255' },
          { name: 'created_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    await runner.release();
    const legacy = benignPlugin('legacy');
    const legacyDigest = createHash('sha256').update(legacy).digest('hex');
    writeFileSync(join(t.config.communityPluginDir, 'legacy_0123456789abcdef.py'), legacy);
    const insert =
      'INSERT INTO user_plugins (name, description, `group`, `type`, author, status, user_id, file_path, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
    await t.dataSource.query(insert, [
      'Legacy approved',
      'Old and trusted',
      'web',
      'active',
      'Old Author',
      'approved',
      alice.id,
      'legacy_0123456789abcdef.py',
      '2024-01-02 03:04:05.678',
    ]);
    await t.dataSource.query(insert, [
      'Legacy pending',
      'Old and waiting',
      'network',
      'grep',
      'Old Author',
      'pending',
      alice.id,
      'missing.py',
      '2024-02-03 04:05:06.789',
    ]);
    await t.dataSource.query('DELETE FROM migrations WHERE name = ?', ['CreateUserPlugins1763683400000']);
    await t.dataSource.query('ALTER TABLE users DROP COLUMN is_admin');
    const oldPluginRows = await rowsOf(t.dataSource, 'user_plugins');
    const oldUserRows = await rowsOf(t.dataSource, 'users');
    expect(oldUserRows).toHaveLength(2);
    expect(Object.keys(oldUserRows[0])).not.toContain('is_admin');
    const tokenCount = async (dataSource: DataSource) =>
      Number(
        // Alice's only: root is promoted at start-up, and a promotion revokes the account's tokens.
        (
          (await dataSource.query(
            "SELECT COUNT(*) AS count FROM user_login_tokens t JOIN users u ON u.id = t.user_id WHERE u.email = 'alice@example.com'",
          )) as Array<{
            count: unknown;
          }>
        )[0].count,
      );
    const tokens = await tokenCount(t.dataSource);
    await t.close();

    // First start: the migration finds the table and leaves it; the upgrade adds what is missing.
    const logs = jest.spyOn(Logger.prototype, 'log');
    const first = await bootApp({ databaseUrl: url, dataDir, env: { SVC_ADMIN_EMAILS: 'root@example.com' } });
    try {
      expect(addedColumnLogs(logs).sort()).toEqual(
        [
          'Added column users.is_admin (default 0)',
          'Added column user_plugins.rejection_reason (default NULL)',
          'Added column user_plugins.reviewed_by_user_id (default NULL)',
          'Added column user_plugins.reviewed_at (default NULL)',
          'Added column user_plugins.execution_timeout (default 300)',
          'Added column user_plugins.sha256 (default NULL)',
          'Added column user_plugins.updated_at (default NULL)',
          'Added column user_plugins.version (default 1.0.0)',
          'Added column user_plugins.tags (default )',
          'Added column user_plugins.file_missing_at (default NULL)',
          'Added column user_plugins.name_key (default NULL)',
        ].sort(),
      );

      const upgradedPluginColumns = await columnsOf(first.dataSource, 'user_plugins');
      expect(upgradedPluginColumns.map((column) => column.name).sort()).toEqual([...PLUGIN_COLUMNS].sort());
      for (const name of ADDED_PLUGIN_COLUMNS) {
        expect(upgradedPluginColumns.find((column) => column.name === name)).toEqual(
          freshPluginColumns.find((column) => column.name === name),
        );
      }
      const upgradedUserColumns = await columnsOf(first.dataSource, 'users');
      expect(upgradedUserColumns.find((column) => column.name === 'is_admin')).toEqual(
        freshUserColumns.find((column) => column.name === 'is_admin'),
      );
      expect(upgradedUserColumns.map((column) => column.name).sort()).toEqual(
        freshUserColumns.map((column) => column.name).sort(),
      );

      // Existing rows keep every value; the new columns hold their defaults, but for the mark the
      // start-up reconciliation put on the row whose file is missing.
      const pluginRows = await rowsOf(first.dataSource, 'user_plugins');
      expect(pluginRows.map((row) => pick(row, OLD_PLUGIN_COLUMNS))).toEqual(oldPluginRows);
      const marked = expect.anything();
      for (const row of pluginRows) {
        expect({
          ...pick(row, ADDED_PLUGIN_COLUMNS),
          execution_timeout: Number(row.execution_timeout),
          rating_total: Number(row.rating_total),
          ratings_count: Number(row.ratings_count),
        }).toEqual({
          rejection_reason: null,
          reviewed_by_user_id: null,
          reviewed_at: null,
          execution_timeout: 300,
          sha256: row.file_path === 'missing.py' ? null : legacyDigest,
          updated_at: null,
          version: '1.0.0',
          tags: '',
          file_missing_at: row.file_path === 'missing.py' ? marked : null,
          // The lifecycle migration's columns and first versions: a pending plugin waits as 1.0.0,
          // and the approved one's digest is computed from its file at start-up.
          pending_version: row.status === 'pending' ? '1.0.0' : null,
          rating_total: 0,
          ratings_count: 0,
          file_altered_at: null,
          // Names compare as user names do: each row gets its key at start-up.
          name_key: String(row.name).toLowerCase(),
        });
      }
      const versionRows = (await first.dataSource.query(
        'SELECT plugin_id, version, sha256, file_path, status FROM plugin_versions ORDER BY plugin_id',
      )) as Row[];
      expect(versionRows.map((row) => ({ ...row, plugin_id: Number(row.plugin_id) }))).toEqual([
        {
          plugin_id: oldPluginRows[0].id,
          version: '1.0.0',
          sha256: legacyDigest,
          file_path: 'legacy_0123456789abcdef.py',
          status: 'approved',
        },
        {
          plugin_id: oldPluginRows[1].id,
          version: '1.0.0',
          sha256: null,
          file_path: 'missing.py',
          status: 'pending',
        },
      ]);
      const userRows = await rowsOf(first.dataSource, 'users');
      // Every column kept, but the credential generation of root: its promotion ended its sessions.
      expect(userRows.map((row) => pick(row, Object.keys(oldUserRows[0])))).toEqual(
        oldUserRows.map((row) =>
          row.email === 'root@example.com'
            ? { ...row, credential_generation: Number(row.credential_generation) + 1 }
            : row,
        ),
      );
      // Seeding ran after the upgrade, on the new column: root is an admin, alice is not.
      expect(userRows.map((row) => [row.email, Number(row.is_admin)])).toEqual([
        ['alice@example.com', 0],
        ['root@example.com', 1],
      ]);
      // Rebuilding `users` (SQLite) did not cascade into the tables that reference it.
      expect(await tokenCount(first.dataSource)).toBe(tokens);
      expect(
        await first.dataSource.query('SELECT name FROM migrations WHERE name = ?', [
          'CreateUserPlugins1763683400000',
        ]),
      ).toHaveLength(1);

      // The upgraded rows work through the API, with the same tokens as before.
      const auth = (user: SignedInUser) => ({ Authorization: `Bearer ${user.token}` });
      // Root became an admin at this start, which ended its sessions: it logs in again.
      await first.http().get('/api/v1/community-plugins/me/').set(auth(admin)).expect(401);
      admin.token = await login(first, admin);
      const catalogue = await first.http().get('/api/v1/community-plugins/').set(auth(alice)).expect(200);
      expect((catalogue.body as { data: { plugins: Row[] } }).data.plugins).toEqual([
        {
          id: oldPluginRows[0].id,
          name: 'Legacy approved',
          description: 'Old and trusted',
          group: 'web',
          type: 'active',
          author: 'Old Author',
          status: 'approved',
          approval_status: 'approved',
          version: '1.0.0',
          tags: [],
          sha256: legacyDigest,
          created_at: '2024-01-02T03:04:05.678Z',
          updated_at: '2024-01-02T03:04:05.678Z',
          rating: 0,
          ratings_count: 0,
        },
      ]);
      // Indexed at this start (the table lacked tags when the index migration ran): q= finds them.
      const searched = await first
        .http()
        .get('/api/v1/community-plugins/?q=TRUSTED')
        .set(auth(alice))
        .expect(200);
      expect(
        (searched.body as { data: { plugins: Row[] } }).data.plugins.map((plugin) => plugin.name),
      ).toEqual(['Legacy approved']);
      const source = await first
        .http()
        .get(`/api/v1/community-plugins/${String(oldPluginRows[0].id)}/source/`)
        .set(auth(admin))
        .expect(200);
      expect((source.body as { data: Row }).data.source_code).toBe(legacy.toString());
      // Its file is missing: shown as broken, never approved, still reviewable otherwise.
      const refused = await first
        .http()
        .post(`/api/v1/community-plugins/${String(oldPluginRows[1].id)}/approve/`)
        .set(auth(admin))
        .expect(409);
      expect(refused.body).toEqual({ status: 'fail', message: 'Plugin file is missing' });
      const rejected = await first
        .http()
        .post(`/api/v1/community-plugins/${String(oldPluginRows[1].id)}/reject/`)
        .set(auth(admin))
        .send({ reason: 'File lost' })
        .expect(200);
      expect((rejected.body as { data: Row }).data).toMatchObject({
        status: 'rejected',
        execution_timeout: 300,
        file_missing: true,
      });
      await upload(first, alice.token, {
        fields: validFields('After upgrade'),
        file: benignPlugin('after'),
      }).expect(201);
    } finally {
      await first.close();
    }

    // Second start: nothing to add, nothing changed.
    const reference = await bootApp({ databaseUrl: url, dataDir });
    const schemaBefore = await schemaSnapshot(reference.dataSource);
    const pluginsBefore = await rowsOf(reference.dataSource, 'user_plugins');
    const usersBefore = await rowsOf(reference.dataSource, 'users');
    await reference.close();
    logs.mockClear();
    const second = await bootApp({ databaseUrl: url, dataDir });
    try {
      expect(addedColumnLogs(logs)).toEqual([]);
      expect(await schemaSnapshot(second.dataSource)).toEqual(schemaBefore);
      expect(await rowsOf(second.dataSource, 'user_plugins')).toEqual(pluginsBefore);
      expect(await rowsOf(second.dataSource, 'users')).toEqual(usersBefore);
    } finally {
      await second.close();
    }
  });

  it('runs at every start, not once: columns dropped after the migration was recorded come back with their defaults', async () => {
    const { t, alice } = await installWithData();
    const url = databaseUrlOf(t);
    const dataDir = dirname(t.config.communityPluginDir);
    // The databases' own DROP COLUMN: TypeORM's would rebuild the table on SQLite.
    await t.dataSource.query('ALTER TABLE user_plugins DROP COLUMN execution_timeout');
    // A table without the column has no index on it either (SQLite refuses to drop an indexed column).
    await t.dataSource.query(
      t.config.database.type === 'mysql'
        ? 'DROP INDEX idx_user_plugins_sha256 ON user_plugins'
        : 'DROP INDEX idx_user_plugins_sha256',
    );
    await t.dataSource.query('ALTER TABLE user_plugins DROP COLUMN sha256');
    const before = await rowsOf(t.dataSource, 'user_plugins');
    expect(before).toHaveLength(1);
    await t.close();

    const logs = jest.spyOn(Logger.prototype, 'log');
    const again = await bootApp({ databaseUrl: url, dataDir });
    try {
      expect(addedColumnLogs(logs).sort()).toEqual([
        'Added column user_plugins.execution_timeout (default 300)',
        'Added column user_plugins.sha256 (default NULL)',
      ]);
      const after = await rowsOf(again.dataSource, 'user_plugins');
      expect(after.map((row) => pick(row, Object.keys(before[0])))).toEqual(before);
      expect(after.map((row) => [Number(row.execution_timeout), row.sha256])).toEqual([[300, null]]);
      // Adding columns left the rest of the table alone: the name's key is still unique.
      await expect(
        again.dataSource.query(
          'INSERT INTO user_plugins (name, name_key, description, `group`, `type`, author, status, user_id, file_path, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [
            'FRESH PLUGIN',
            'fresh plugin',
            'd',
            'web',
            'grep',
            'a',
            'pending',
            alice.id,
            'x.py',
            '2024-01-01 00:00:00.000',
          ],
        ),
      ).rejects.toThrow(/UNIQUE|Duplicate/i);
    } finally {
      await again.close();
    }
  });

  it('adds version and tags at start-up to a plugin table that lacks them, with 1.0.0 and no tags', async () => {
    const { t, alice } = await installWithData();
    const url = databaseUrlOf(t);
    const dataDir = dirname(t.config.communityPluginDir);
    await t.dataSource.query('ALTER TABLE user_plugins DROP COLUMN version');
    await t.dataSource.query('ALTER TABLE user_plugins DROP COLUMN tags');
    const before = await rowsOf(t.dataSource, 'user_plugins');
    await t.close();

    const logs = jest.spyOn(Logger.prototype, 'log');
    const again = await bootApp({ databaseUrl: url, dataDir });
    try {
      expect(addedColumnLogs(logs).sort()).toEqual([
        'Added column user_plugins.tags (default )',
        'Added column user_plugins.version (default 1.0.0)',
      ]);
      const after = await rowsOf(again.dataSource, 'user_plugins');
      expect(after.map((row) => pick(row, Object.keys(before[0])))).toEqual(before);
      expect(after.map((row) => [row.version, row.tags])).toEqual(before.map(() => ['1.0.0', '']));
      const mine = await again
        .http()
        .get('/api/v1/community-plugins/mine/')
        .set('Authorization', `Bearer ${alice.token}`)
        .expect(200);
      const plugins = (mine.body as { data: { plugins: Row[] } }).data.plugins;
      expect(plugins.map((plugin) => [plugin.version, plugin.tags])).toEqual(before.map(() => ['1.0.0', []]));
      const tagged = await upload(again, alice.token, {
        fields: { ...validFields('Tagged after upgrade'), version: '3.1', tags: 'one,two' },
        file: benignPlugin('tagged'),
      }).expect(201);
      expect((tagged.body as { data: Row }).data).toMatchObject({ version: '3.1', tags: ['one', 'two'] });
    } finally {
      await again.close();
    }
  });
});
