import { existsSync, readdirSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import {
  MAX_EXAMPLE_LINES,
  PluginFileReconciler,
} from '../src/community-plugins/files/plugin-file-reconciler';
import {
  benignPlugin,
  SignedInUser,
  signUpAs,
  upload,
  validFields,
  readThenApprove,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

/** The reconciliation pass itself, on the real app and database: what it removes, keeps and marks. */
describe('plugin file reconciliation', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let boss: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({
      smtp,
      env: {
        SVC_ADMIN_EMAILS: 'boss@example.com',
        PLUGIN_FILE_GRACE_SECONDS: '300',
        // The many-files case uploads more than a user's defaults allow.
        PLUGIN_MAX_PENDING_PER_USER: '100',
        PLUGIN_UPLOADS_PER_HOUR: '100',
      },
    });
    alice = await signUpAs(t, smtp, 'alice');
    boss = await signUpAs(t, smtp, 'boss');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const dir = () => t.config.communityPluginDir;
  const aged = (name: string, content = 'x') => {
    writeFileSync(join(dir(), name), content);
    const old = new Date(Date.now() - 600_000);
    utimesSync(join(dir(), name), old, old);
  };

  it('removes old files without a row and old temporary files; keeps young ones, stored files and anything else', async () => {
    const stored = await upload(t, alice.token, { fields: validFields('Kept'), file: benignPlugin('kept') });
    expect(stored.status).toBe(201);
    const storedFiles = readdirSync(dir());
    aged('orphan_0123456789abcdef.py');
    aged('.upload-0123456789abcdef01234567.tmp');
    writeFileSync(join(dir(), 'young_fedcba9876543210.py'), 'x');
    writeFileSync(join(dir(), '.upload-fedcba9876543210fedcba98.tmp'), 'x');
    aged('README.txt');

    const result = await t.app.get(PluginFileReconciler).reconcile();
    expect(result).toEqual({
      removedFiles: ['orphan_0123456789abcdef.py'],
      removedTemporary: ['.upload-0123456789abcdef01234567.tmp'],
      missing: [],
      restored: [],
      claimed: true,
      altered: [],
      unaltered: [],
    });
    expect(readdirSync(dir()).sort()).toEqual(
      [
        ...storedFiles,
        'young_fedcba9876543210.py',
        '.upload-fedcba9876543210fedcba98.tmp',
        'README.txt',
      ].sort(),
    );
    for (const name of ['young_fedcba9876543210.py', '.upload-fedcba9876543210fedcba98.tmp', 'README.txt']) {
      unlinkSync(join(dir(), name));
    }
  });

  it('marks a row whose file is missing (never deletes it), shows it broken to admins, and clears the mark when the file is back', async () => {
    const response = await upload(t, alice.token, {
      fields: validFields('Lost'),
      file: benignPlugin('lost'),
    });
    const id = (response.body as { data: { id: number } }).data.id;
    const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
      id,
    ])) as Array<{
      file_path: string;
    }>;
    const path = join(dir(), row.file_path);
    unlinkSync(path);

    const reconciler = t.app.get(PluginFileReconciler);
    expect((await reconciler.reconcile()).missing).toEqual([id]);
    const detail = await t
      .http()
      .get(`/api/v1/community-plugins/${id}/`)
      .set('Authorization', `Bearer ${boss.token}`)
      .expect(200);
    expect((detail.body as { data: { file_missing: boolean } }).data.file_missing).toBe(true);
    // A second pass logs nothing new.
    expect((await reconciler.reconcile()).missing).toEqual([]);

    writeFileSync(path, benignPlugin('lost'));
    expect((await reconciler.reconcile()).restored).toEqual([id]);
    const source = await t
      .http()
      .get(`/api/v1/community-plugins/${id}/source/`)
      .set('Authorization', `Bearer ${boss.token}`);
    expect(source.status).toBe(200);
    expect(existsSync(path)).toBe(true);
  });

  it('logs one summary line and at most a few examples per pass, however many files are missing or altered', async () => {
    const count = MAX_EXAMPLE_LINES + 7;
    const plugins: Array<{ id: number; path: string; content: Buffer }> = [];
    for (let index = 0; index < count; index++) {
      const content = benignPlugin(`many ${index}`);
      const response = await upload(t, alice.token, { fields: validFields(`Many ${index}`), file: content });
      expect(response.status).toBe(201);
      const id = (response.body as { data: { id: number } }).data.id;
      await readThenApprove(t, boss.token, id).expect(200);
      const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
        id,
      ])) as Array<{
        file_path: string;
      }>;
      plugins.push({ id, path: join(dir(), row.file_path), content });
    }
    const ids = plugins.map((plugin) => plugin.id).sort((a, b) => a - b);
    const reconciler = t.app.get(PluginFileReconciler);
    const errors = jest.spyOn(Logger.prototype, 'error');
    const logs = jest.spyOn(Logger.prototype, 'log');
    /** The reconciler's own lines since the last call. */
    const lines = () => {
      const ofReconciler = (spy: typeof errors) =>
        spy.mock.calls
          .filter((_, index) => (spy.mock.contexts[index] as { context?: string }).context === 'PluginFiles')
          .map(([line]) => String(line));
      const found = { errors: ofReconciler(errors), logs: ofReconciler(logs) };
      errors.mockClear();
      logs.mockClear();
      return found;
    };
    try {
      for (const plugin of plugins) unlinkSync(plugin.path);
      expect((await reconciler.reconcile()).missing.sort((a, b) => a - b)).toEqual(ids);
      let logged = lines();
      expect(logged.logs).toEqual([]);
      expect(logged.errors).toHaveLength(MAX_EXAMPLE_LINES + 1);
      expect(logged.errors.slice(0, MAX_EXAMPLE_LINES).every((line) => / is missing$/.test(line))).toBe(true);
      expect(logged.errors[MAX_EXAMPLE_LINES]).toMatch(
        new RegExp(
          `: ${count} plugin\\(s\\) whose file is missing, marked file_missing .*\\(${MAX_EXAMPLE_LINES} examples above, 7 more not listed\\)$`,
        ),
      );
      // Nothing new: nothing logged.
      expect(await reconciler.reconcile()).toMatchObject({ missing: [], restored: [], altered: [] });
      expect(lines()).toEqual({ errors: [], logs: [] });

      // Back, but each with other bytes than were approved.
      for (const plugin of plugins)
        writeFileSync(plugin.path, Buffer.concat([plugin.content, Buffer.from('# changed\n')]));
      const changed = await reconciler.reconcile();
      expect(changed.restored.sort((a, b) => a - b)).toEqual(ids);
      expect(changed.altered.sort((a, b) => a - b)).toEqual(ids);
      logged = lines();
      // The first examples are the files back (found first); the summary is an error, files being altered.
      expect(logged.logs).toHaveLength(MAX_EXAMPLE_LINES);
      expect(logged.logs.every((line) => / its file is back$/.test(line))).toBe(true);
      expect(logged.errors).toHaveLength(1);
      const summary = logged.errors[logged.errors.length - 1];
      expect(summary).toContain(`${count} plugin(s) whose file is back`);
      expect(summary).toContain(`${count} approved plugin(s) whose file no longer has the approved digest`);
      expect(summary).toContain(
        `(${MAX_EXAMPLE_LINES} examples above, ${2 * count - MAX_EXAMPLE_LINES} more not listed)`,
      );

      for (const plugin of plugins) writeFileSync(plugin.path, plugin.content);
      expect((await reconciler.reconcile()).unaltered.sort((a, b) => a - b)).toEqual(ids);
      logged = lines();
      expect(logged.errors).toEqual([]);
      expect(logged.logs).toHaveLength(MAX_EXAMPLE_LINES + 1);
      expect(logged.logs[MAX_EXAMPLE_LINES]).toContain(
        `${count} approved plugin(s) whose file has the approved digest again (${MAX_EXAMPLE_LINES} examples above, 7 more not listed)`,
      );
    } finally {
      errors.mockRestore();
      logs.mockRestore();
    }
  });
});
