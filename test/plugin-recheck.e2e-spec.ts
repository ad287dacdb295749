import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PluginRecheckService } from '../src/community-plugins/review/plugin-recheck.service';
import { RULES_VERSION } from '../src/plugin-validator';
import {
  ADMIN_VIEW_KEYS,
  benignPlugin,
  databaseUrlOf,
  HOSTILE_SOURCE,
  OUTSIDE_PROFILE_SOURCE,
  OWNER_VIEW_KEYS,
  PUBLIC_VIEW_KEYS,
  SignedInUser,
  signUpAs,
  upload,
  validFields,
  readThenApprove,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { bootApp, createTestApp, TestApp } from './helpers/test-app';

type Row = Record<string, unknown>;
const sha = (content: Buffer) => createHash('sha256').update(content).digest('hex');
const dataOf = <T = Row>(response: { body: unknown }) => (response.body as { data: T }).data;

jest.setTimeout(120_000);

/**
 * Issues 18 and 42: approved plugins are judged again by the rules version the app starts with.
 * The app is started, two plugins approved through the API; then, with the app stopped, one of
 * them is made a plugin approved under older rules that the current rules refuse (its approved
 * file and digest replaced by an ordinary plugin rules v8 accepted and the plugin profile does
 * not: a logging Handler subclass), and the other is given a verdict of an older rules version.
 * The next start re-checks both, off the request path: admins see which fall outside the profile,
 * and both stay approved and served.
 */
describe('re-check of approved plugins when the rules change', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let boss: SignedInUser;
  let clean: number;
  let turned: number;
  let logs: jest.SpyInstance;

  const as = (user: SignedInUser) => ({
    get: (path: string) => t.http().get(`/api/v1/${path}`).set('Authorization', `Bearer ${user.token}`),
    post: (path: string) => t.http().post(`/api/v1/${path}`).set('Authorization', `Bearer ${user.token}`),
  });
  const approvedUpload = async (name: string): Promise<number> => {
    const response = await upload(t, alice.token, { fields: validFields(name), file: benignPlugin(name) });
    expect(response.status).toBe(201);
    const id = dataOf<{ id: number }>(response).id;
    await readThenApprove(t, boss.token, id).expect(200);
    return id;
  };
  const rechecks = async () =>
    (await t.dataSource.query(
      'SELECT plugin_id, rules_version, findings FROM plugin_rechecks ORDER BY plugin_id',
    )) as Array<{ plugin_id: number | string; rules_version: number | string; findings: string }>;

  beforeAll(async () => {
    await smtp.start();
    const env = { SVC_ADMIN_EMAILS: 'boss@example.com' };
    t = await createTestApp({ smtp, env });
    alice = await signUpAs(t, smtp, 'alice');
    boss = await signUpAs(t, smtp, 'boss');
    clean = await approvedUpload('Clean');
    turned = await approvedUpload('Turned');
    // The first start found nothing approved; these approvals came after it.
    await t.app.get(PluginRecheckService).settled();
    if ((await rechecks()).length > 0) throw new Error('the first start had no approved plugin to re-check');

    const url = databaseUrlOf(t);
    const pluginDir = t.config.communityPluginDir;
    const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
      turned,
    ])) as Array<{
      file_path: string;
    }>;
    await t.close();

    // What an older validator approved: those bytes and their digest, served.
    const digest = sha(OUTSIDE_PROFILE_SOURCE);
    writeFileSync(join(pluginDir, row.file_path), OUTSIDE_PROFILE_SOURCE);
    // Its reconciler marks the replaced file altered (logged): the mark is cleared below.
    const seed = await bootApp({ databaseUrl: url, dataDir: dirname(pluginDir), smtp, env });
    await seed.app.get(PluginRecheckService).settled();
    await seed.dataSource.query('DELETE FROM plugin_rechecks');
    await seed.dataSource.query('UPDATE user_plugins SET sha256 = ?, file_altered_at = NULL WHERE id = ?', [
      digest,
      turned,
    ]);
    await seed.dataSource.query(
      "UPDATE plugin_versions SET sha256 = ? WHERE plugin_id = ? AND status = 'approved'",
      [digest, turned],
    );
    // An older rules version's verdict on the clean plugin, flagged then: replaced by this start's.
    const [cleanRow] = (await seed.dataSource.query('SELECT sha256 FROM user_plugins WHERE id = ?', [
      clean,
    ])) as Array<{
      sha256: string;
    }>;
    await seed.dataSource.query(
      'INSERT INTO plugin_rechecks (plugin_id, rules_version, sha256, findings, checked_at) VALUES (?, ?, ?, ?, ?)',
      [
        clean,
        RULES_VERSION - 1,
        cleanRow.sha256,
        JSON.stringify([{ rule: 'old-rule', message: 'Old', line: 1, column: 1 }]),
        '2026-01-01 00:00:00.000',
      ],
    );
    await seed.close();

    logs = jest.spyOn(Logger.prototype, 'log');
    t = await bootApp({ databaseUrl: url, dataDir: dirname(pluginDir), smtp, env });
    await t.app.get(PluginRecheckService).settled();
  });
  afterAll(async () => {
    logs?.mockRestore();
    await t.close();
    await smtp.stop();
  });

  it('logs how many approved plugins were re-checked and how many the current rules flag', () => {
    const lines = logs.mock.calls
      .map((call) => String(call[0]))
      .filter((line) => line.startsWith('Re-checked'));
    expect(lines).toEqual([
      `Re-checked 2 approved plugin(s) against validator rules v${RULES_VERSION}: 1 flagged`,
    ]);
  });

  it('flags the plugin the current rules refuse in the admin view, with its findings; it stays approved', async () => {
    const view = dataOf(await as(boss).get(`community-plugins/${turned}/`).expect(200));
    expect(Object.keys(view).sort()).toEqual(ADMIN_VIEW_KEYS);
    expect(view).toMatchObject({
      status: 'approved',
      recheck_rules_version: RULES_VERSION,
      file_altered: false,
    });
    const findings = view.recheck_findings as Array<Record<string, unknown>>;
    expect(findings.length).toBeGreaterThan(0);
    for (const finding of findings) {
      expect(Object.keys(finding).sort()).toEqual(['column', 'line', 'message', 'rule']);
    }
    // The Handler base of line 6 is outside the profile; every finding names a rule of its page.
    expect(findings).toContainEqual(expect.objectContaining({ rule: 'class-machinery', line: 6 }));
    const documented = readFileSync(join(__dirname, '../docs/plugin-profile.md'), 'utf8');
    for (const finding of findings) expect(documented).toContain(`### \`${String(finding.rule)}\``);

    const cleanView = dataOf(await as(boss).get(`community-plugins/${clean}/`).expect(200));
    expect(cleanView).toMatchObject({
      status: 'approved',
      recheck_findings: [],
      recheck_rules_version: RULES_VERSION,
    });
  });

  it('lists the flagged plugin in the admin queue, not the clean one', async () => {
    const queue = dataOf<{ total: number; plugins: Row[] }>(
      await as(boss).get('community-plugins/?status=pending').expect(200),
    );
    expect(queue.plugins.map((plugin) => plugin.id)).toEqual([turned]);
    expect(queue.total).toBe(1);
    expect(queue.plugins[0]).toMatchObject({ status: 'approved', recheck_rules_version: RULES_VERSION });
  });

  it('keeps both in the public catalogue (nothing unpublished), and shows no re-check to anyone but admins', async () => {
    const catalogue = dataOf<{ plugins: Row[] }>(await as(alice).get('community-plugins/').expect(200));
    expect(catalogue.plugins.map((plugin) => plugin.id).sort()).toEqual([clean, turned].sort());
    for (const plugin of catalogue.plugins) expect(Object.keys(plugin).sort()).toEqual(PUBLIC_VIEW_KEYS);
    const own = dataOf(await as(alice).get(`community-plugins/${turned}/`).expect(200));
    expect(Object.keys(own).sort()).toEqual(OWNER_VIEW_KEYS);
    const mine = dataOf<{ plugins: Row[] }>(await as(alice).get('community-plugins/mine').expect(200));
    for (const plugin of mine.plugins) expect(plugin).not.toHaveProperty('recheck_findings');
    await as(alice).get('community-plugins/?status=pending').expect(403);
  });

  it('stores one verdict per plugin, of the current rules, even when two passes (replicas) check at once', async () => {
    const stored = await rechecks();
    expect(stored.map((row) => [Number(row.plugin_id), Number(row.rules_version)])).toEqual([
      [clean, RULES_VERSION],
      [turned, RULES_VERSION],
    ]);
    expect(JSON.parse(stored[0].findings)).toEqual([]);

    await t.dataSource.query('DELETE FROM plugin_rechecks');
    const service = t.app.get(PluginRecheckService);
    const passes = await Promise.all([service.pass(), service.pass(), service.pass()]);
    for (const pass of passes) expect(pass.more).toBe(false);
    expect((await rechecks()).map((row) => Number(row.plugin_id))).toEqual([clean, turned]);
    // Nothing left for a further pass.
    expect(await service.pass()).toMatchObject({ checked: 0, flagged: 0 });
  });

  it('skips an approved file that was altered on disk (the reconciler marks it)', async () => {
    await t.dataSource.query('DELETE FROM plugin_rechecks WHERE plugin_id = ?', [clean]);
    const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
      clean,
    ])) as Array<{
      file_path: string;
    }>;
    writeFileSync(join(t.config.communityPluginDir, row.file_path), HOSTILE_SOURCE);
    expect(await t.app.get(PluginRecheckService).pass()).toMatchObject({ checked: 0 });
    expect((await rechecks()).map((stored) => Number(stored.plugin_id))).toEqual([turned]);
  });
});
