import { existsSync, readdirSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PluginFileReconciler } from '../src/community-plugins/plugin-file-reconciler';
import { benignPlugin, SignedInUser, signUpAs, upload, validFields } from './helpers/marketplace';
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
      env: { SVC_ADMIN_EMAILS: 'boss@example.com', PLUGIN_FILE_GRACE_SECONDS: '300' },
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
});
