import { Logger } from '@nestjs/common';
import { dirname } from 'node:path';
import { seedCatalogue } from '../bench/catalogue-scale';
import { NAME_KEY_BATCH } from '../src/community-plugins/shared/plugin-name-keys';
import { identityKey } from '../src/users/identity-key';
import { expectFail } from './helpers/envelopes';
import {
  benignPlugin,
  databaseUrlOf,
  SignedInUser,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { bootApp, createTestApp, TestApp } from './helpers/test-app';

const MIGRATION = 'PluginNameKey1763695000000';

/** Plugin names compare as user names do: NFKC and case folding, on both databases (issue 21). */
describe('plugin names', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp });
    alice = await signUpAs(t, smtp, 'alice');
    bob = await signUpAs(t, smtp, 'bob');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const uploadNamed = (user: SignedInUser, name: string) =>
    upload(t, user.token, { fields: validFields(name), file: benignPlugin(name) });

  it('refuses a name that is another spelling of a taken one: case, full width, ligatures, composed forms', async () => {
    expect((await uploadNamed(alice, 'Scanner')).status).toBe(201);
    for (const spelling of ['SCANNER', 'Ｓｃａｎｎｅｒ', 'ｓｃａｎｎｅｒ', ' scanner ']) {
      expectFail(await uploadNamed(bob, spelling), 409, 'Plugin name already exists');
    }
    expect((await uploadNamed(alice, 'ﬁnder')).status).toBe(201);
    expectFail(await uploadNamed(bob, 'Finder'), 409, 'Plugin name already exists');
    expect((await uploadNamed(alice, 'Cafe\u0301 scan')).status).toBe(201);
    expectFail(await uploadNamed(bob, 'CAFÉ SCAN'), 409, 'Plugin name already exists');
    // Names the key tells apart stay apart, on MariaDB too (its collation would fold accents).
    expect((await uploadNamed(bob, 'Cafe scan')).status).toBe(201);
  });

  it('refuses a name too long once normalised, saying so', async () => {
    // U+FDFA expands to 18 characters under NFKC: 20 of them are 360.
    const response = await uploadNamed(alice, '\ufdfa'.repeat(20));
    expect(response.status).toBe(400);
    expect((response.body as { errors: unknown }).errors).toEqual({
      name: 'must be at most 255 characters once normalised',
    });
  });

  it('two spellings of one name uploaded at once: one row, the other 409', async () => {
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all([
        uploadNamed(alice, `Twin ${round}`),
        uploadNamed(bob, `ＴＷＩＮ ${round}`),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
      const [rows] = (await t.dataSource.query('SELECT COUNT(*) AS n FROM user_plugins WHERE name_key = ?', [
        `twin ${round}`,
      ])) as Array<{ n: unknown }>;
      expect(Number(rows.n)).toBe(1);
    }
  });

  it('an install with colliding names from before the key: reported at start-up, both kept, the start goes on', async () => {
    const scanner = await t.dataSource.query("SELECT id FROM user_plugins WHERE name = 'Scanner'");
    const other = await uploadNamed(alice, 'Placeholder');
    expect(other.status).toBe(201);
    const otherId = (other.body as { data: { id: number } }).data.id;
    // The database as it was before the key: no column, no index, the migration not recorded.
    const mysql = t.config.database.type !== 'sqlite';
    await t.dataSource.query(
      mysql ? 'DROP INDEX uq_user_plugins_name_key ON user_plugins' : 'DROP INDEX uq_user_plugins_name_key',
    );
    await t.dataSource.query('ALTER TABLE user_plugins DROP COLUMN name_key');
    await t.dataSource.query('UPDATE user_plugins SET name = ? WHERE id = ?', ['Ｓｃａｎｎｅｒ', otherId]);
    await t.dataSource.query('DELETE FROM migrations WHERE name = ?', [MIGRATION]);
    const url = databaseUrlOf(t);
    const dataDir = dirname(t.config.communityPluginDir);
    await t.close();

    // Reported at each start until an operator renames one of them.
    const warnings = jest.spyOn(Logger.prototype, 'warn');
    try {
      t = await bootApp({ databaseUrl: url, dataDir, smtp });
      const migrationWarnings = warnings.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.startsWith('Plugin '));
      expect(migrationWarnings).toEqual([
        `Plugin ${otherId} has the same name as plugin ${String((scanner as Array<{ id: number }>)[0].id)} ` +
          'once case and Unicode forms are ignored; both keep their names, and no new plugin can take either',
      ]);
    } finally {
      warnings.mockRestore();
    }
    const rows = (await t.dataSource.query(
      'SELECT name, name_key FROM user_plugins WHERE id IN (?, ?) ORDER BY id',
      [(scanner as Array<{ id: number }>)[0].id, otherId],
    )) as Array<{ name: string; name_key: string | null }>;
    expect(rows).toEqual([
      { name: 'Scanner', name_key: 'scanner' },
      { name: 'Ｓｃａｎｎｅｒ', name_key: null },
    ]);
    expectFail(await uploadNamed(bob, 'sCaNnEr'), 409, 'Plugin name already exists');
    expect((await uploadNamed(bob, 'Fresh after the upgrade')).status).toBe(201);
  });
  it.each([
    ['older rows beside keyed ones (a rolling upgrade: the unique index is there)', true],
    ['an install from before the key (no unique index yet)', false],
  ])(
    'keys more plugins than one batch at start-up, %s: collisions across batches reported, the rest keyed',
    async (_label, indexed) => {
      const before = await t.dataSource.query(
        "SELECT COUNT(*) AS n FROM user_plugins WHERE name LIKE 'scale-%'",
      );
      const seededBefore = Number((before as Array<{ n: unknown }>)[0].n);
      if (seededBefore === 0)
        await seedCatalogue(t.dataSource, t.config.communityPluginDir, NAME_KEY_BATCH + 300, alice.id);
      const seeded = (
        (await t.dataSource.query(
          "SELECT id FROM user_plugins WHERE name LIKE 'scale-%' ORDER BY id",
        )) as Array<{
          id: unknown;
        }>
      ).map((row) => Number(row.id));
      const [early, late, keeper, latecomer] = [
        seeded[10],
        seeded[NAME_KEY_BATCH + 50],
        seeded[20],
        seeded[NAME_KEY_BATCH + 100],
      ];
      // One pair within the keyless rows, a batch apart; one keyless row taking a keyed row's name.
      await t.dataSource.query('UPDATE user_plugins SET name = ? WHERE id = ?', [
        `Twin across ${indexed}`,
        early,
      ]);
      await t.dataSource.query('UPDATE user_plugins SET name = ? WHERE id = ?', [
        `ＴＷＩＮ ACROSS ${indexed}`,
        late,
      ]);
      await t.dataSource.query('UPDATE user_plugins SET name = ?, name_key = ? WHERE id = ?', [
        `Keeper ${indexed}`,
        `keeper ${indexed}`,
        keeper,
      ]);
      await t.dataSource.query('UPDATE user_plugins SET name = ? WHERE id = ?', [
        `ＫＥＥＰＥＲ ${indexed}`,
        latecomer,
      ]);
      // As rows older code wrote: no key, but for the keeper.
      await t.dataSource.query(
        "UPDATE user_plugins SET name_key = NULL WHERE name LIKE 'scale-%' OR id IN (?, ?, ?)",
        [early, late, latecomer],
      );
      if (!indexed) {
        const mysql = t.config.database.type !== 'sqlite';
        await t.dataSource.query(
          mysql
            ? 'DROP INDEX uq_user_plugins_name_key ON user_plugins'
            : 'DROP INDEX uq_user_plugins_name_key',
        );
      }
      const url = databaseUrlOf(t);
      const dataDir = dirname(t.config.communityPluginDir);
      await t.close();

      // (The pair of the test above is reported at each start too; only these plugins are looked at.)
      const warnings = jest.spyOn(Logger.prototype, 'warn');
      try {
        t = await bootApp({ databaseUrl: url, dataDir, smtp });
        expect(
          warnings.mock.calls
            .map(([message]) => String(message))
            .filter((message) => seeded.some((id) => message.startsWith(`Plugin ${id} `))),
        ).toEqual([
          `Plugin ${late} has the same name as plugin ${early} once case and Unicode forms are ignored; ` +
            'both keep their names, and no new plugin can take either',
          `Plugin ${latecomer} has the same name as plugin ${keeper} once case and Unicode forms are ignored; ` +
            'both keep their names, and no new plugin can take either',
        ]);
      } finally {
        warnings.mockRestore();
      }
      const rows = (await t.dataSource.query(
        `SELECT id, name, name_key FROM user_plugins WHERE id IN (${seeded.map(() => '?').join(', ')}) ORDER BY id`,
        seeded,
      )) as Array<{ id: unknown; name: string; name_key: string | null }>;
      const expected = rows.map((row) => ({
        id: Number(row.id),
        key: [late, latecomer].includes(Number(row.id)) ? null : identityKey(row.name),
      }));
      expect(rows.map((row) => ({ id: Number(row.id), key: row.name_key }))).toEqual(expected);
      expectFail(await uploadNamed(bob, `twin across ${indexed}`), 409, 'Plugin name already exists');
    },
    120_000,
  );
});
