import { PluginRecheckService } from '../src/community-plugins/review/plugin-recheck.service';
import {
  benignPlugin,
  OWNER_VIEW_KEYS,
  PUBLIC_VIEW_KEYS,
  readThenApprove,
  signUpAs,
  upload,
  validFields,
  type SignedInUser,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, type TestApp } from './helpers/test-app';

jest.setTimeout(180_000);

type Row = Record<string, unknown>;
const dataOf = <T = Row>(response: { body: unknown }) => (response.body as { data: T }).data;

/** A plugin the validator accepts with warnings: it reads names it never binds (NameError there). */
const warned = (names: string[], description = 'Warns') =>
  Buffer.from(
    `DESCRIPTION = ${JSON.stringify(description)}\n\n\ndef run(PluginInfo):\n` +
      names.map((name) => `    ${name}(PluginInfo)\n`).join('') +
      '    return []\n',
  );
/** The warning of the name read on line 5 + index, letter for letter. */
const unbound = (name: string, index = 0) => ({
  rule: 'unbound-name',
  message: `'${name}' is never bound in the plugin: CPython raises NameError here (import it or assign it first)`,
  line: 5 + index,
  column: 5,
});

/**
 * Issue 42: the validator's warnings on an accepted plugin (`unbound-name`) are kept with the
 * version, shown to its uploader and admins in the versions list and the reviewers' diff, never
 * to anyone else, and computed again when approved plugins are re-checked. The upload answer
 * stays the contract's owner view.
 */
describe("the validator's warnings reach the uploader and the reviewers", () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let boss: SignedInUser;

  const as = (user: SignedInUser) => ({
    get: (path: string) =>
      t.http().get(`/api/v1/community-plugins/${path}`).set('Authorization', `Bearer ${user.token}`),
  });
  const uploaded = async (name: string, file: Buffer): Promise<number> => {
    const response = await upload(t, alice.token, { fields: validFields(name), file }).expect(201);
    // The upload answer is the owner view, key for key: warnings are not in it.
    expect(Object.keys(dataOf(response)).sort()).toEqual(OWNER_VIEW_KEYS);
    return dataOf<{ id: number }>(response).id;
  };
  const versionsOf = async (user: SignedInUser, id: number) =>
    dataOf<{ versions: Row[] }>(await as(user).get(`${id}/versions`).expect(200)).versions;
  const storedWarnings = async (id: number) =>
    (
      (await t.dataSource.query(
        'SELECT validator_warnings FROM plugin_versions WHERE plugin_id = ? ORDER BY id',
        [id],
      )) as Array<{ validator_warnings: string | null }>
    ).map((row) =>
      row.validator_warnings === null ? null : (JSON.parse(row.validator_warnings) as unknown),
    );

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({
      smtp,
      env: { SVC_ADMIN_EMAILS: 'boss@example.com', PLUGIN_MAX_PENDING_PER_USER: '1000' },
    });
    alice = await signUpAs(t, smtp, 'alice');
    bob = await signUpAs(t, smtp, 'bob');
    boss = await signUpAs(t, smtp, 'boss');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('keeps the warnings with the version and shows them to the uploader and admins only', async () => {
    const id = await uploaded('Warned plugin', warned(['fetch_page']));
    expect(await storedWarnings(id)).toEqual([[unbound('fetch_page')]]);

    for (const insider of [alice, boss]) {
      const [version] = await versionsOf(insider, id);
      expect(version).toMatchObject({
        version: '1.0.0',
        status: 'pending',
        warnings: [unbound('fetch_page')],
      });
    }
    const diff = dataOf(await as(boss).get(`${id}/versions/1.0.0/diff/`).expect(200));
    expect(diff.warnings).toEqual([unbound('fetch_page')]);

    await readThenApprove(t, boss.token, id).expect(200);
    // Other users see the approved version and the public view, without the warnings.
    const [shown] = await versionsOf(bob, id);
    expect(shown).toMatchObject({ version: '1.0.0', status: 'approved' });
    expect(shown).not.toHaveProperty('warnings');
    const detail = dataOf(await as(bob).get(`${id}/`).expect(200));
    expect(Object.keys(detail).sort()).toEqual(PUBLIC_VIEW_KEYS);
    const list = dataOf<Row[] | { plugins: Row[] }>(await as(bob).get('').expect(200));
    const rows = Array.isArray(list) ? list : list.plugins;
    const listed = rows.find((row) => row.id === id);
    expect(listed).toBeDefined();
    expect(JSON.stringify(rows)).not.toContain('warnings');
    expect(JSON.stringify(rows)).not.toContain('fetch_page');
    // The uploader's own list is the owner view, as the contract has it.
    const mine = dataOf<Row[] | { plugins: Row[] }>(await as(alice).get('mine/').expect(200));
    for (const row of Array.isArray(mine) ? mine : mine.plugins)
      expect(Object.keys(row).sort()).toEqual(OWNER_VIEW_KEYS);
  });

  it('keeps none for a plugin without warnings, and the warnings of each new version', async () => {
    const id = await uploaded('Quiet plugin', benignPlugin('Quiet'));
    expect((await versionsOf(alice, id))[0].warnings).toEqual([]);
    await readThenApprove(t, boss.token, id).expect(200);
    await t
      .http()
      .post(`/api/v1/community-plugins/${id}/versions/`)
      .set('Authorization', `Bearer ${alice.token}`)
      .field('version', '1.1.0')
      .attach('plugin_file', warned(['parse_title'], 'Quiet, then warned'), {
        filename: 'quiet.py',
        contentType: 'text/x-python',
      })
      .expect(201);
    const [newest, first] = await versionsOf(boss, id);
    expect(newest).toMatchObject({ version: '1.1.0', status: 'pending', warnings: [unbound('parse_title')] });
    expect(first).toMatchObject({ version: '1.0.0', warnings: [] });
    const diff = dataOf(await as(boss).get(`${id}/versions/1.1.0/diff/`).expect(200));
    expect(diff).toMatchObject({ base_version: '1.0.0', warnings: [unbound('parse_title')] });
  });

  it('keeps the first 50 warnings, each message at most 200 characters, and says how many more', async () => {
    const long = `a${'b'.repeat(250)}`;
    const names = [long, ...Array.from({ length: 59 }, (_, index) => `helper_${index}`)];
    const id = await uploaded('Many warnings', warned(names, 'Many warnings'));
    const [version] = await versionsOf(alice, id);
    const warnings = version.warnings as Array<{
      rule: string;
      message: string;
      line: number;
      column: number;
    }>;
    expect(warnings).toHaveLength(51);
    const longMessage = unbound(long).message;
    expect(warnings[0]).toEqual({ ...unbound(long), message: `${longMessage.slice(0, 199)}…` });
    expect(Array.from(warnings[0].message)).toHaveLength(200);
    for (let index = 1; index < 50; index++)
      expect(warnings[index]).toEqual(unbound(`helper_${index - 1}`, index));
    expect(warnings[50]).toEqual({
      rule: 'too-large',
      message: '10 more warnings are not listed',
      line: 55,
      column: 5,
    });
  });

  it('computes the warnings of approved plugins again when the rules are re-checked', async () => {
    const id = await uploaded('Rechecked plugin', warned(['read_banner'], 'Rechecked'));
    await readThenApprove(t, boss.token, id).expect(200);
    // As a version uploaded before warnings were kept: none stored, and no verdict of these rules.
    await t.dataSource.query('UPDATE plugin_versions SET validator_warnings = NULL WHERE plugin_id = ?', [
      id,
    ]);
    await t.dataSource.query('DELETE FROM plugin_rechecks WHERE plugin_id = ?', [id]);
    expect((await versionsOf(alice, id))[0].warnings).toBeNull();
    expect(dataOf(await as(boss).get(`${id}/versions/1.0.0/diff/`).expect(200)).warnings).toBeNull();

    await t.app.get(PluginRecheckService).pass();
    expect(await storedWarnings(id)).toEqual([[unbound('read_banner')]]);
    expect((await versionsOf(boss, id))[0].warnings).toEqual([unbound('read_banner')]);
  });
});
