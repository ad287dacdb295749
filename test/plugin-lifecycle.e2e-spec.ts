import { Logger } from '@nestjs/common';
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { canonicalJson } from '../src/common/canonical-json';
import { PluginFileReconciler } from '../src/community-plugins/files/plugin-file-reconciler';
import { PluginManifestService } from '../src/community-plugins/manifest/plugin-manifest.service';
import { fail } from './helpers/envelopes';
import {
  benignPlugin,
  databaseUrlOf,
  svcAdminOn as svcAdmin,
  HOSTILE_SOURCE,
  SignedInUser,
  marketplaceApp,
  signUpAs,
  upload,
  pluginFiles,
  readThenApprove,
  validFields,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { bootApp, createTestApp, TestApp } from './helpers/test-app';

type Row = Record<string, unknown>;
const sha = (content: Buffer | string) => createHash('sha256').update(content).digest('hex');
const dataOf = <T = Row>(response: { body: unknown }) => (response.body as { data: T }).data;

jest.setTimeout(120_000);

/** A plugin source of its own (each its own digest). */
const source = (text: string) => benignPlugin(text);

function postVersion(
  t: TestApp,
  user: SignedInUser,
  id: number | string,
  fields: Record<string, string>,
  file: Buffer = source(`v ${JSON.stringify(fields)}`),
  filename = 'update.py',
) {
  let call = t
    .http()
    .post(`/api/v1/community-plugins/${id}/versions/`)
    .set('Authorization', `Bearer ${user.token}`);
  for (const [key, value] of Object.entries(fields)) call = call.field(key, value);
  return call.attach('plugin_file', file, { filename, contentType: 'text/x-python' });
}

const as = (t: TestApp, user: SignedInUser) => ({
  get: (path: string) => t.http().get(`/api/v1/${path}`).set('Authorization', `Bearer ${user.token}`),
  post: (path: string) => t.http().post(`/api/v1/${path}`).set('Authorization', `Bearer ${user.token}`),
  put: (path: string) => t.http().put(`/api/v1/${path}`).set('Authorization', `Bearer ${user.token}`),
  delete: (path: string) => t.http().delete(`/api/v1/${path}`).set('Authorization', `Bearer ${user.token}`),
  patch: (path: string) => t.http().patch(`/api/v1/${path}`).set('Authorization', `Bearer ${user.token}`),
});

/** As an admin approves: after reading the source (see readThenApprove). */
const approveAs = (t: TestApp, user: SignedInUser, id: unknown) => readThenApprove(t, user.token, String(id));

async function uploaded(t: TestApp, user: SignedInUser, name: string, file = source(name)): Promise<Row> {
  const response = await upload(t, user.token, { fields: validFields(name), file });
  expect(response.status).toBe(201);
  return dataOf(response);
}

async function fileOf(t: TestApp, pluginId: unknown, version?: string): Promise<string> {
  const rows = (await t.dataSource.query(
    version === undefined
      ? 'SELECT file_path FROM user_plugins WHERE id = ?'
      : 'SELECT file_path FROM plugin_versions WHERE plugin_id = ? AND version = ?',
    version === undefined ? [pluginId] : [pluginId, version],
  )) as Array<{ file_path: string }>;
  return join(t.config.communityPluginDir, rows[0].file_path);
}

async function auditRows(t: TestApp): Promise<Row[]> {
  return (await t.dataSource.query('SELECT * FROM audit_log ORDER BY seq')) as Row[];
}

describe('plugin lifecycle', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let carol: SignedInUser;
  let boss: SignedInUser;
  let chief: SignedInUser;

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, bob, carol, boss, chief },
    } = await marketplaceApp(smtp, ['alice', 'bob', 'carol', 'boss', 'chief']));
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  describe('the manifest key at start', () => {
    const keyChanges = async () =>
      (await t.dataSource.query(
        "SELECT details FROM audit_log WHERE action = 'manifest_key_change' ORDER BY seq",
      )) as Array<{ details: string }>;
    const startWith = (key: string) =>
      bootApp({
        databaseUrl: databaseUrlOf(t),
        dataDir: dirname(t.config.communityPluginDir),
        env: { PLUGIN_MANIFEST_KEY: key },
      });

    it('a start with the recorded key records nothing and does not wait for the audit chain; another key is recorded once, naming the one before', async () => {
      const before = await keyChanges();
      expect(before.length).toBeGreaterThanOrEqual(1);
      // Another writer holds the chain's row lock for the whole start, as replicas appending
      // under load do (MySQL: SQLite has one writer, and the start's own writes would wait).
      const holder = t.dataSource.createQueryRunner();
      const mysql = t.config.database.type === 'mysql';
      if (mysql) {
        await holder.startTransaction();
        await holder.query('UPDATE audit_chain SET id = id WHERE id = 1');
      }
      try {
        const same = await startWith(t.config.pluginManifestKey);
        await same.close();
      } finally {
        if (mysql) await holder.rollbackTransaction();
        await holder.release();
      }
      expect(await keyChanges()).toEqual(before);

      const previous = (JSON.parse(before[before.length - 1].details) as { fingerprint: string }).fingerprint;
      const newKey = generateKeyPairSync('ed25519')
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString();
      const rotated = await startWith(newKey);
      const fingerprint = rotated.app.get(PluginManifestService).fingerprint;
      await rotated.close();
      await (await startWith(newKey)).close();
      const after = await keyChanges();
      expect(after).toHaveLength(before.length + 1);
      expect(JSON.parse(after[after.length - 1].details)).toEqual({ fingerprint, previous });
      expect(fingerprint).not.toBe(previous);
    });
  });

  describe('versions and updates', () => {
    it('serves the approved version while an update waits, reviews the update as a diff, and mails each decision', async () => {
      const v1 = source('first');
      const plugin = await uploaded(t, alice, 'Versioned', v1);
      const id = plugin.id as number;
      expect(plugin).toMatchObject({ version: '1.0.0', status: 'pending', sha256: sha(v1) });

      // A first version diffs against nothing.
      const firstDiff = dataOf(
        await as(t, boss).get(`community-plugins/${id}/versions/1.0.0/diff/`).expect(200),
      );
      expect(firstDiff).toMatchObject({
        version: '1.0.0',
        base_version: null,
        base_sha256: null,
        new_findings: [],
      });
      expect(String(firstDiff.diff)).toMatch(
        /^--- \/dev\/null\n\+\+\+ b\/Versioned 1\.0\.0\n@@ -0,0 \+1,\d+ @@\n\+DESCRIPTION/,
      );

      await approveAs(t, boss, id).expect(200);
      await t.deliverMail();
      expect(smtp.lastTo(alice.email)).toMatchObject({ subject: 'Plugin approved: Versioned 1.0.0' });

      const v2 = Buffer.from(v1.toString().replace('return []', 'return ["title"]'));
      const posted = await postVersion(
        t,
        alice,
        id,
        { version: '1.1.0', changelog: 'Finds titles' },
        v2,
      ).expect(201);
      // The owner view of the plugin: still serving 1.0.0.
      expect(dataOf(posted)).toMatchObject({ id, version: '1.0.0', sha256: sha(v1), status: 'approved' });

      const publicView = dataOf(await as(t, bob).get(`community-plugins/${id}/`).expect(200));
      expect(publicView).toMatchObject({ version: '1.0.0', sha256: sha(v1), status: 'approved' });
      const catalogue = dataOf<{ plugins: Row[] }>(
        await as(t, bob).get('community-plugins/?q=Versioned').expect(200),
      );
      expect(catalogue.plugins.map((row) => [row.version, row.sha256])).toEqual([['1.0.0', sha(v1)]]);

      // The admin queue lists it and says which version waits.
      const queue = dataOf<{ plugins: Row[] }>(
        await as(t, boss).get('community-plugins/?status=pending').expect(200),
      );
      expect(queue.plugins.find((row) => row.id === id)).toMatchObject({
        status: 'approved',
        pending_version: '1.1.0',
      });

      // One version waits at a time; order is semantic.
      expect((await postVersion(t, alice, id, { version: '1.2.0' }).expect(409)).body).toEqual(
        fail('A version is already waiting for review'),
      );

      const diff = dataOf(await as(t, boss).get(`community-plugins/${id}/versions/1.1.0/diff/`).expect(200));
      expect(diff).toMatchObject({
        plugin_id: id,
        version: '1.1.0',
        sha256: sha(v2),
        base_version: '1.0.0',
        base_sha256: sha(v1),
        new_findings: [],
      });
      expect(diff.diff).toContain('-    return []\n+    return ["title"]\n');
      expect(JSON.stringify(diff)).not.toContain(t.config.communityPluginDir);
      await as(t, bob).get(`community-plugins/${id}/versions/1.1.0/diff/`).expect(403);
      expect(
        (await as(t, boss).get(`community-plugins/${id}/versions/9.9.9/diff/`).expect(404)).body,
      ).toEqual(fail('Version not found'));

      // Everyone sees approved versions; the uploader and admins see every one, admins the reviews.
      const forBob = dataOf<{ versions: Row[] }>(
        await as(t, bob).get(`community-plugins/${id}/versions/`).expect(200),
      );
      expect(forBob.versions.map((row) => row.version)).toEqual(['1.0.0']);
      expect(Object.keys(forBob.versions[0]).sort()).toEqual([
        'changelog',
        'created_at',
        'sha256',
        'status',
        'version',
      ]);
      const forAlice = dataOf<{ versions: Row[] }>(
        await as(t, alice).get(`community-plugins/${id}/versions/`).expect(200),
      );
      expect(forAlice.versions).toEqual([
        expect.objectContaining({
          version: '1.1.0',
          status: 'pending',
          changelog: 'Finds titles',
          sha256: sha(v2),
        }),
        expect.objectContaining({ version: '1.0.0', status: 'approved', changelog: null, sha256: sha(v1) }),
      ]);
      expect(forAlice.versions[0]).not.toHaveProperty('reviewed_by_user_id');
      const forBoss = dataOf<{ versions: Row[] }>(
        await as(t, boss).get(`community-plugins/${id}/versions/`).expect(200),
      );
      expect(forBoss.versions[1]).toMatchObject({
        reviewed_by_user_id: boss.id,
        reviewed_at: expect.any(String),
        approvals: [{ user_id: boss.id, at: expect.any(String) }],
      });

      const approved = dataOf(await approveAs(t, chief, id).expect(200));
      expect(approved).toMatchObject({
        version: '1.1.0',
        sha256: sha(v2),
        status: 'approved',
        pending_version: null,
      });
      expect(dataOf(await as(t, bob).get(`community-plugins/${id}/`).expect(200))).toMatchObject({
        version: '1.1.0',
      });
      await t.deliverMail();
      expect(smtp.lastTo(alice.email)).toMatchObject({ subject: 'Plugin approved: Versioned 1.1.0' });

      expect((await postVersion(t, alice, id, { version: '1.0.9' }).expect(409)).body).toEqual(
        fail('Version must be greater than 1.1.0'),
      );
      expect((await postVersion(t, alice, id, { version: '1.1' }).expect(409)).body).toEqual(
        fail('Version must be greater than 1.1.0'),
      );

      // An update refused: the approved version stays, the uploader reads why.
      await postVersion(t, alice, id, { version: '1.2.0-beta.1' }).expect(201);
      const rejected = dataOf(
        await as(t, boss).post(`community-plugins/${id}/reject/`).send({ reason: 'Too chatty' }).expect(200),
      );
      expect(rejected).toMatchObject({ status: 'approved', version: '1.1.0', pending_version: null });
      await t.deliverMail();
      const mail = smtp.lastTo(alice.email);
      expect(mail?.subject).toBe('Plugin rejected: Versioned 1.2.0-beta.1');
      expect(mail?.text).toContain('Too chatty');
      const after = dataOf<{ versions: Row[] }>(
        await as(t, alice).get(`community-plugins/${id}/versions/`).expect(200),
      );
      expect(after.versions[0]).toMatchObject({
        version: '1.2.0-beta.1',
        status: 'rejected',
        rejection_reason: 'Too chatty',
      });
      // A rejected version still counts for the order.
      expect((await postVersion(t, alice, id, { version: '1.2.0-alpha' }).expect(409)).body).toEqual(
        fail('Version must be greater than 1.2.0-beta.1'),
      );
      await postVersion(t, alice, id, { version: '1.2.0' }).expect(201);

      // Revoking: no version waits... first the waiting one is rejected, then the approved one is revoked.
      await as(t, boss).post(`community-plugins/${id}/reject/`).send({ reason: 'Not now' }).expect(200);
      const revoked = dataOf(
        await as(t, boss).post(`community-plugins/${id}/reject/`).send({ reason: 'Phones home' }).expect(200),
      );
      expect(revoked).toMatchObject({
        status: 'rejected',
        rejection_reason: 'Phones home',
        version: '1.1.0',
      });
      await as(t, bob).get(`community-plugins/${id}/`).expect(404);
      const manifest = dataOf<{ plugins: Row[] }>(
        await as(t, bob).get('community-plugins/manifest/').expect(200),
      );
      expect(manifest.plugins.map((row) => row.id)).not.toContain(id);
      expect(dataOf(await as(t, alice).get(`community-plugins/${id}/`).expect(200))).toMatchObject({
        rejection_reason: 'Phones home',
      });
    });

    it("takes the upload's checks in the upload's order, and answers 404 to anyone but the uploader", async () => {
      const plugin = await uploaded(t, alice, 'Checked updates');
      const id = plugin.id as number;
      // Not the uploader (an admin neither), or no such plugin: 404 before the body is read.
      for (const [user, target] of [
        [bob, id],
        [boss, id],
        [alice, 999999],
        [alice, 'abc'],
      ] as const) {
        expect((await postVersion(t, user, target, { version: '2.0.0' }).expect(404)).body).toEqual(
          fail('Plugin not found'),
        );
      }
      expect(
        (await postVersion(t, alice, id, { version: '2.0.0' }, source('x'), 'x.txt').expect(400)).body,
      ).toEqual(fail('Only .py files are accepted'));
      const tooBig = Buffer.alloc(t.config.pluginUploadMaxSize + 1, 0x23);
      await postVersion(t, alice, id, { version: '2.0.0' }, tooBig).expect(413);
      const noVersion = await postVersion(t, alice, id, { changelog: 'x' }).expect(400);
      expect(noVersion.body).toEqual({
        ...fail('Invalid plugin metadata', { version: 'is required' }),
        data: { errors: ['version: is required'] },
      });
      const badVersion = await postVersion(t, alice, id, {
        version: 'two',
        changelog: 'y'.repeat(2001),
      }).expect(400);
      expect(Object.keys((badVersion.body as { errors: Row }).errors).sort()).toEqual([
        'changelog',
        'version',
      ]);
      // The first version still waits: 409 before the validator runs.
      expect((await postVersion(t, alice, id, { version: '2.0.0' }).expect(409)).body).toEqual(
        fail('A version is already waiting for review'),
      );
      await approveAs(t, boss, id).expect(200);
      const hostile = await postVersion(t, alice, id, { version: '2.0.0' }, HOSTILE_SOURCE).expect(422);
      // The shape docs/api.md gives a refused version, as for a new plugin: the findings at the
      // top and under data.findings, and as lines of text under data.errors.
      const finding = {
        rule: 'forbidden-import',
        message:
          "Module 'os' is not in the plugin profile: a plugin neither touches files nor runs commands itself: use the framework's helpers (plugin_helper.CommandDump with a resource list)",
        line: 1,
        column: 8,
      };
      expect(hostile.body).toEqual({
        status: 'fail',
        message: 'Plugin failed validation',
        errors: [finding],
        data: { errors: [`line 1, column 8: ${finding.message} (forbidden-import)`], findings: [finding] },
      });
      // Nothing was kept of the refused versions.
      const rows = (await t.dataSource.query('SELECT version FROM plugin_versions WHERE plugin_id = ?', [
        id,
      ])) as Row[];
      expect(rows.map((row) => row.version)).toEqual(['1.0.0']);
      const named = new Set(
        (
          (await t.dataSource.query('SELECT file_path FROM plugin_versions')) as Array<{ file_path: string }>
        ).map((row) => row.file_path),
      );
      expect(pluginFiles(t.config.communityPluginDir).filter((file) => !named.has(file))).toEqual([]);

      // A rejected plugin's new version makes it pending again, showing the new version.
      await as(t, boss).post(`community-plugins/${id}/reject/`).send({ reason: 'Revoked' }).expect(200);
      const again = dataOf(await postVersion(t, alice, id, { version: '2.0.0' }).expect(201));
      expect(again).toMatchObject({ status: 'pending', version: '2.0.0', rejection_reason: null });
    });
  });

  describe('who may decide', () => {
    it('refuses an admin reviewing their own upload, and lets another admin', async () => {
      const plugin = await uploaded(t, boss, 'Boss made');
      const id = plugin.id as number;
      expect((await approveAs(t, boss, id).expect(403)).body).toEqual(
        fail('Admins cannot review their own plugins'),
      );
      expect(
        (await as(t, boss).post(`community-plugins/${id}/reject/`).send({ reason: 'mine' }).expect(403)).body,
      ).toEqual(fail('Admins cannot review their own plugins'));
      await approveAs(t, chief, id).expect(200);
      // Revoking their own approved plugin is a review too.
      await as(t, boss).post(`community-plugins/${id}/reject/`).send({ reason: 'mine' }).expect(403);
    });
  });

  describe('bound to the bytes that run', () => {
    it('approve refuses a file whose digest changed, as the source endpoint does', async () => {
      const plugin = await uploaded(t, alice, 'Tampered before review');
      writeFileSync(await fileOf(t, plugin.id), source('swapped'));
      const message = fail('Plugin file was modified on disk');
      expect(
        (
          await as(t, boss)
            .get(`community-plugins/${String(plugin.id)}/source/`)
            .expect(409)
        ).body,
      ).toEqual(message);
      expect((await approveAs(t, boss, String(plugin.id)).expect(409)).body).toEqual(message);
      expect(
        dataOf(
          await as(t, boss)
            .get(`community-plugins/${String(plugin.id)}/`)
            .expect(200),
        ),
      ).toMatchObject({
        status: 'pending',
      });
    });

    it('signs the manifest with Ed25519 over canonical JSON; test/plugin-manifest.e2e-spec.ts runs the loader', async () => {
      const plugin = await uploaded(t, alice, 'Manifested é');
      await approveAs(t, boss, String(plugin.id)).expect(200);
      const manifest = dataOf<{ serial: number; issued_at: string; plugins: Row[]; signature: string }>(
        await as(t, bob).get('community-plugins/manifest/').expect(200),
      );
      const key = dataOf<{ public_key_pem: string; algorithm: string; fingerprint: string }>(
        await as(t, bob).get('community-plugins/manifest/key/').expect(200),
      );
      expect(key.algorithm).toBe('Ed25519');
      expect(Object.keys(manifest).sort()).toEqual([
        'expires_at',
        'generated_at',
        'issued_at',
        'plugins',
        'serial',
        'signature',
      ]);
      expect(manifest.plugins).toContainEqual({
        id: plugin.id,
        name: 'Manifested é',
        version: '1.0.0',
        sha256: plugin.sha256,
      });
      for (const entry of manifest.plugins)
        expect(Object.keys(entry).sort()).toEqual(['id', 'name', 'sha256', 'version']);
      const { signature, ...signed } = manifest;
      const publicKey = createPublicKey(key.public_key_pem);
      expect(
        verify(null, Buffer.from(canonicalJson(signed)), publicKey, Buffer.from(signature, 'base64')),
      ).toBe(true);
      const forged = {
        ...signed,
        plugins: [...signed.plugins, { id: 999, name: 'x', version: '1', sha256: '0'.repeat(64) }],
      };
      expect(
        verify(null, Buffer.from(canonicalJson(forged)), publicKey, Buffer.from(signature, 'base64')),
      ).toBe(false);
      expect(JSON.stringify(manifest)).not.toMatch(/file_path|\.py/);
      await t.http().get('/api/v1/community-plugins/manifest/').expect(401);
    });

    it('the reconciler treats an approved file whose digest changed as broken; svc-admin plugins verify names it', async () => {
      const plugin = await uploaded(t, alice, 'Altered later');
      const id = plugin.id as number;
      await approveAs(t, boss, id).expect(200);
      const clean = await svcAdmin(t, ['plugins', 'verify']);
      expect(clean).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(
          new RegExp(
            `^\\d+ approved plugin file\\(s\\) in ${t.config.communityPluginDir} match their digests\n$`,
          ),
        ),
      });

      const file = await fileOf(t, id);
      const original = readFileSync(file);
      writeFileSync(file, source('evil twin'));
      const result = await t.app.get(PluginFileReconciler).reconcile();
      expect(result.altered).toEqual([id]);
      await as(t, bob).get(`community-plugins/${id}/`).expect(404);
      const catalogue = dataOf<{ plugins: Row[] }>(await as(t, bob).get('community-plugins/').expect(200));
      expect(catalogue.plugins.map((row) => row.id)).not.toContain(id);
      const manifest = dataOf<{ plugins: Row[] }>(
        await as(t, bob).get('community-plugins/manifest/').expect(200),
      );
      expect(manifest.plugins.map((row) => row.id)).not.toContain(id);
      expect(dataOf(await as(t, boss).get(`community-plugins/${id}/`).expect(200))).toMatchObject({
        file_altered: true,
      });
      const dirty = await svcAdmin(t, ['plugins', 'verify']);
      expect(dirty.code).toBe(1);
      expect(dirty.stderr).toContain(`Plugin ${id} (Altered later): ${file.split('/').pop()} differs`);
      expect(dirty.stderr).toContain(
        `1 of ${clean.stdout.split(' ')[0]} approved plugin file(s) in ${t.config.communityPluginDir} are missing or differ from their digests (the approvals of ${databaseUrlOf(t)})\n`,
      );

      writeFileSync(file, original);
      expect((await t.app.get(PluginFileReconciler).reconcile()).unaltered).toEqual([id]);
      await as(t, bob).get(`community-plugins/${id}/`).expect(200);
    });
  });

  describe('ratings', () => {
    it('rates 1 to 5 once per user, never their own; views, min_rating, sort and q by author', async () => {
      const liked = await uploaded(t, alice, 'Liked rated');
      const meh = await uploaded(t, alice, 'Meh rated');
      const hidden = await uploaded(t, alice, 'Unrated pending');
      for (const plugin of [liked, meh]) await approveAs(t, boss, String(plugin.id)).expect(200);
      const rate = (user: SignedInUser, plugin: Row, stars: unknown) =>
        as(t, user)
          .put(`community-plugins/${String(plugin.id)}/rating/`)
          .send({ stars });

      expect(dataOf(await rate(bob, liked, 4).expect(200))).toMatchObject({ rating: 4, ratings_count: 1 });
      expect(dataOf(await rate(bob, liked, 5).expect(200))).toMatchObject({ rating: 5, ratings_count: 1 });
      expect(dataOf(await rate(carol, liked, 4).expect(200))).toMatchObject({
        rating: 4.5,
        ratings_count: 2,
      });
      await rate(carol, meh, 2).expect(200);
      await rate(bob, meh, 3).expect(200);
      await rate(boss, meh, 3).expect(200);
      expect(
        dataOf(
          await as(t, bob)
            .get(`community-plugins/${String(meh.id)}/`)
            .expect(200),
        ),
      ).toMatchObject({
        rating: 2.7,
        ratings_count: 3,
      });

      for (const stars of [0, 6, 2.5, 'four', null]) {
        expect((await rate(bob, liked, stars).expect(400)).body).toEqual(
          fail('Stars must be an integer from 1 to 5'),
        );
      }
      expect((await rate(alice, liked, 5).expect(403)).body).toEqual(fail('You cannot rate your own plugin'));
      await rate(bob, hidden, 5).expect(404);
      expect((await rate(boss, hidden, 5).expect(409)).body).toEqual(
        fail('Only approved plugins can be rated'),
      );
      await as(t, bob).put('community-plugins/999999/rating/').send({ stars: 3 }).expect(404);

      const list = async (query: string) =>
        dataOf<{ plugins: Row[] }>(
          await as(t, bob).get(`community-plugins/?${query}`).expect(200),
        ).plugins.map((row) => row.name);
      expect(await list('q=rated&min_rating=4.5')).toEqual(['Liked rated']);
      expect(await list('q=rated&min_rating=2.7')).toEqual(['Meh rated', 'Liked rated']);
      expect(await list('q=rated&min_rating=2.8')).toEqual(['Liked rated']);
      expect(await list('q=rated&sort=rating')).toEqual(['Liked rated', 'Meh rated']);
      expect(await list('q=rated&sort=name')).toEqual(['Liked rated', 'Meh rated']);
      expect((await list('q=alice%20example')).length).toBeGreaterThanOrEqual(2);
      const bad = await as(t, bob).get('community-plugins/?min_rating=6&sort=stars').expect(400);
      expect(Object.keys((bad.body as { errors: Row }).errors).sort()).toEqual(['min_rating', 'sort']);
    });
  });

  describe('races, fired at once', () => {
    const okOr4xx = (responses: Array<{ status: number }>) => {
      for (const response of responses) expect(response.status).toBeLessThan(500);
    };

    it('two admins approving one version: one approval, one outcome', async () => {
      for (let round = 0; round < 5; round += 1) {
        const plugin = await uploaded(t, alice, `Double approve ${round}`);
        const answers = await Promise.all([
          approveAs(t, boss, String(plugin.id)),
          approveAs(t, chief, String(plugin.id)),
        ]);
        okOr4xx(answers);
        expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
        const approvals = (await t.dataSource.query(
          'SELECT COUNT(*) AS n FROM plugin_version_approvals a JOIN plugin_versions v ON v.id = a.version_id WHERE v.plugin_id = ?',
          [plugin.id],
        )) as Array<{ n: unknown }>;
        expect(Number(approvals[0].n)).toBe(1);
      }
    });

    it('an approve racing a new version: the waiting version is decided once, the new one waits or is refused', async () => {
      for (let round = 0; round < 5; round += 1) {
        const plugin = await uploaded(t, alice, `Approve vs version ${round}`);
        const id = plugin.id as number;
        await approveAs(t, boss, id).expect(200);
        await postVersion(t, alice, id, { version: '2.0.0' }).expect(201);
        const [approve, posted] = await Promise.all([
          approveAs(t, chief, id),
          postVersion(t, alice, id, { version: '3.0.0' }),
        ]);
        okOr4xx([approve, posted]);
        expect(approve.status).toBe(200);
        expect([201, 409]).toContain(posted.status);
        const row = dataOf(await as(t, boss).get(`community-plugins/${id}/`).expect(200));
        expect(row).toMatchObject({
          status: 'approved',
          version: '2.0.0',
          pending_version: posted.status === 201 ? '3.0.0' : null,
        });
      }
    });

    it('an approve racing a delete: approved or gone, every file of a deleted plugin gone with it', async () => {
      for (let round = 0; round < 6; round += 1) {
        const plugin = await uploaded(t, alice, `Approve vs delete ${round}`);
        const id = plugin.id as number;
        const answers = await Promise.all([
          approveAs(t, boss, id),
          as(t, chief).delete(`community-plugins/${id}/delete/`),
        ]);
        okOr4xx(answers);
        const rows = (await t.dataSource.query('SELECT status FROM user_plugins WHERE id = ?', [
          id,
        ])) as Row[];
        const versions = (await t.dataSource.query(
          'SELECT file_path FROM plugin_versions WHERE plugin_id = ?',
          [id],
        )) as Row[];
        expect(answers[1].status).toBe(200);
        expect(rows).toEqual([]);
        expect(versions).toEqual([]);
      }
      const named = new Set(
        (
          (await t.dataSource.query(
            'SELECT file_path FROM plugin_versions UNION SELECT file_path FROM user_plugins',
          )) as Array<{
            file_path: string;
          }>
        ).map((row) => row.file_path),
      );
      expect(pluginFiles(t.config.communityPluginDir).filter((file) => !named.has(file))).toEqual([]);
    });

    it('ratings from one user sent at once leave one rating, and sums that add up', async () => {
      const plugin = await uploaded(t, alice, 'Rated at once');
      await approveAs(t, boss, String(plugin.id)).expect(200);
      const answers = await Promise.all(
        [5, 1, 4, 2, 3, 5].map((stars, index) =>
          as(t, index % 2 === 0 ? bob : carol)
            .put(`community-plugins/${String(plugin.id)}/rating/`)
            .send({ stars }),
        ),
      );
      okOr4xx(answers);
      for (const answer of answers) expect(answer.status).toBe(200);
      const rows = (await t.dataSource.query(
        'SELECT user_id, stars FROM plugin_ratings WHERE plugin_id = ?',
        [plugin.id],
      )) as Row[];
      expect(rows).toHaveLength(2);
      const [row] = (await t.dataSource.query(
        'SELECT rating_total, ratings_count FROM user_plugins WHERE id = ?',
        [plugin.id],
      )) as Row[];
      expect(Number(row.ratings_count)).toBe(2);
      expect(Number(row.rating_total)).toBe(rows.reduce((sum, rating) => sum + Number(rating.stars), 0));
    });
  });

  describe('the audit log', () => {
    it('records each decision in one hash chain that svc-admin verifies, keeps a deleted plugin’s rows, and names a tampered row', async () => {
      const plugin = await uploaded(t, alice, 'Audited');
      const id = plugin.id as number;
      await approveAs(t, boss, id).expect(200);
      await postVersion(t, alice, id, { version: '1.5.0' }).expect(201);
      await as(t, chief).post(`community-plugins/${id}/reject/`).send({ reason: 'Nope' }).expect(200);
      await as(t, boss).delete(`community-plugins/${id}/delete/`).expect(200);
      await as(t, boss).patch('configuration/').send({ sqlmap_path: '/opt/sqlmap' }).expect(200);

      const page = dataOf<{ total: number; entries: Row[] }>(
        await as(t, boss).get(`audit/?subject=plugin:${id}&limit=10`).expect(200),
      );
      expect(page.entries.map((entry) => entry.action)).toEqual([
        'delete',
        'reject',
        'new_version',
        'approve',
        'upload',
      ]);
      expect(page.entries[0]).toMatchObject({
        actor: 'user',
        actor_user_id: boss.id,
        details: expect.objectContaining({ name: 'Audited' }),
      });
      expect(page.entries[3]).toMatchObject({
        actor_user_id: boss.id,
        details: expect.objectContaining({ approved: true, version: '1.0.0' }),
      });
      const approvals = dataOf<{ entries: Row[] }>(
        await as(t, boss).get('audit/?action=approve&limit=1').expect(200),
      );
      expect(approvals.entries).toHaveLength(1);
      expect(approvals.entries[0].action).toBe('approve');
      const keyChange = dataOf<{ entries: Row[] }>(
        await as(t, boss).get('audit/?action=manifest_key_change').expect(200),
      );
      expect(keyChange.entries[0]).toMatchObject({ actor: 'system', subject: 'manifest-key' });
      const configuration = dataOf<{ entries: Row[] }>(
        await as(t, boss).get('audit/?action=configuration_change').expect(200),
      );
      expect(configuration.entries[0]).toMatchObject({
        actor_user_id: boss.id,
        details: { sqlmap_path: '/opt/sqlmap' },
      });
      await as(t, bob).get('audit/').expect(403);
      const bad = await as(t, boss).get('audit/?action=dance&limit=0').expect(400);
      expect(Object.keys((bad.body as { errors: Row }).errors).sort()).toEqual(['action', 'limit']);

      // Every row follows the one before it, recomputed here from the documented formula.
      const rows = await auditRows(t);
      let previous = '';
      rows.forEach((row, index) => {
        expect(Number(row.seq)).toBe(index + 1);
        expect(row.prev_hash).toBe(previous);
        const canonical = canonicalJson({
          seq: Number(row.seq),
          at: row.at,
          actor: row.actor,
          actor_user_id: row.actor_user_id === null ? null : Number(row.actor_user_id),
          action: row.action,
          subject: row.subject,
          details: JSON.parse(String(row.details)),
        });
        expect(row.hash).toBe(sha(previous + canonical));
        previous = String(row.hash);
      });

      // svc-admin: promote is recorded as its own actor, and the chain verifies.
      const promoted = await svcAdmin(t, ['promote', carol.email]);
      expect(promoted.code).toBe(0);
      const last = (await auditRows(t)).pop()!;
      expect(last).toMatchObject({ actor: 'svc-admin', action: 'promote', subject: `user:${carol.id}` });
      const verified = await svcAdmin(t, ['audit', 'verify']);
      expect(verified).toMatchObject({ code: 0, stdout: `${rows.length + 1} entries, chain intact\n` });

      // A row rewritten behind the service's back breaks the chain at that row.
      const victim = rows[2];
      await t.dataSource.query('UPDATE audit_log SET details = ? WHERE id = ?', [
        '{"forged":true}',
        victim.id,
      ]);
      const broken = await svcAdmin(t, ['audit', 'verify']);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toContain(
        `entry 3 (row id ${String(victim.id)}, seq 3): its hash does not follow the chain`,
      );
      await t.dataSource.query('UPDATE audit_log SET details = ? WHERE id = ?', [victim.details, victim.id]);
      // The newest row removed: the head says so.
      const newest = (await auditRows(t)).pop()!;
      await t.dataSource.query('DELETE FROM audit_log WHERE id = ?', [newest.id]);
      const cut = await svcAdmin(t, ['audit', 'verify']);
      expect(cut.code).toBe(1);
      expect(cut.stderr).toContain('the chain head records');
    });
  });
});

/**
 * Apps with other settings, after the main one has closed: on MariaDB every test app starts by
 * emptying the one test database.
 */
describe('plugin lifecycle: who decides, by setting', () => {
  const smtp = new SmtpSink();
  beforeAll(() => smtp.start());
  afterAll(() => smtp.stop());

  it('PLUGIN_SELF_REVIEW=allowed lets a lone admin review their own upload', async () => {
    const solo = await createTestApp({
      smtp,
      env: { SVC_ADMIN_EMAILS: 'solo@example.com', PLUGIN_SELF_REVIEW: 'allowed' },
    });
    try {
      const admin = await signUpAs(solo, smtp, 'solo');
      const plugin = await uploaded(solo, admin, 'Solo plugin');
      const approved = dataOf(await approveAs(solo, admin, String(plugin.id)).expect(200));
      expect(approved).toMatchObject({ status: 'approved' });
    } finally {
      await solo.close();
    }
  });

  it('PLUGIN_APPROVALS_REQUIRED=2: approved once two distinct admins approved, each approval shown; a warning when admins are too few', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const two = await createTestApp({
      smtp,
      env: { SVC_ADMIN_EMAILS: 'first@example.com,second@example.com', PLUGIN_APPROVALS_REQUIRED: '2' },
    });
    try {
      expect(warn.mock.calls.map(([line]) => String(line))).toContainEqual(
        expect.stringMatching(/^PLUGIN_APPROVALS_REQUIRED is 2 but there are 0 admin\(s\)/),
      );
      warn.mockRestore();
      const author = await signUpAs(two, smtp, 'author');
      const first = await signUpAs(two, smtp, 'first');
      const second = await signUpAs(two, smtp, 'second');
      const plugin = await uploaded(two, author, 'Twice reviewed');
      const id = String(plugin.id);
      const once = dataOf(await approveAs(two, first, id).expect(200));
      expect(once).toMatchObject({ status: 'pending', pending_version: '1.0.0' });
      expect((await approveAs(two, first, id).expect(409)).body).toEqual(
        fail('You have already approved this version'),
      );
      const listed = dataOf<{ versions: Row[] }>(
        await as(two, second).get(`community-plugins/${id}/versions/`).expect(200),
      );
      expect(listed.versions[0].approvals).toEqual([{ user_id: first.id, at: expect.any(String) }]);
      const twice = dataOf(await approveAs(two, second, id).expect(200));
      expect(twice).toMatchObject({
        status: 'approved',
        reviewed_by_user_id: second.id,
        pending_version: null,
      });
      // One rejection rejects a version whatever the approvals so far.
      await postVersion(two, author, id, { version: '1.1.0' }).expect(201);
      await approveAs(two, first, id).expect(200);
      const refused = dataOf(
        await as(two, second).post(`community-plugins/${id}/reject/`).send({ reason: 'No' }).expect(200),
      );
      expect(refused).toMatchObject({ status: 'approved', version: '1.0.0', pending_version: null });
    } finally {
      warn.mockRestore();
      await two.close();
    }
  });
});
