import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api } from './helpers/client';
import {
  benignPlugin,
  marketplaceApp,
  readThenApprove,
  SignedInUser,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { appLog, createTestApp, TestApp } from './helpers/test-app';

jest.setTimeout(180_000);

const dataOf = <T>(response: { body: unknown }) => (response.body as { data: T }).data;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const FILE_NOT_FOUND = { status: 'fail', message: 'File not found' };
const HALF_DAY_MS = 43_200_000;

/** The raw bytes of an answer whatever its type (supertest parses only what it knows). */
const binary = (call: ReturnType<typeof api>) =>
  call.buffer(true).parse((response, done) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => done(null, Buffer.concat(chunks)));
  });

describe('files by digest and answers that can be cached (issue 44)', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let boss: SignedInUser;

  async function uploaded(name: string): Promise<{ id: number; source: Buffer }> {
    const source = benignPlugin(name);
    const response = await upload(t, alice.token, { fields: validFields(name), file: source });
    expect(response.status).toBe(201);
    return { id: dataOf<{ id: number }>(response).id, source };
  }
  async function approved(name: string): Promise<{ id: number; source: Buffer }> {
    const plugin = await uploaded(name);
    await readThenApprove(t, boss.token, plugin.id).expect(200);
    return plugin;
  }
  const revoke = (id: number) =>
    api(t, boss, 'post', `community-plugins/${id}/reject/`).send({ reason: 'Revoked' }).expect(200);
  const file = (digest: string, caller: SignedInUser | null = bob) =>
    binary(api(t, caller, 'get', `community-plugins/files/${digest}`));

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, bob, boss },
    } = await marketplaceApp(smtp, ['alice', 'bob', 'boss']));
  });
  afterEach(() => t.clock.reset());
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  describe('GET community-plugins/files/<sha256>', () => {
    it('serves a listed file whole with its headers, HEAD the same headers without a body', async () => {
      const { source } = await approved('Served whole');
      const digest = sha256(source);
      const answer = await file(digest).expect(200);
      expect(answer.body).toEqual(source);
      expect(answer.headers).toMatchObject({
        'content-type': 'text/x-python',
        etag: `"${digest}"`,
        'cache-control': 'public, max-age=31536000, immutable',
        'content-disposition': `attachment; filename="Served_whole-1.0.0.py"; filename*=UTF-8''Served%20whole-1.0.0.py`,
        'accept-ranges': 'bytes',
        'content-length': String(source.length),
      });
      const head = await api(t, bob, 'head', `community-plugins/files/${digest}`).expect(200);
      expect(head.headers).toMatchObject({
        'content-type': 'text/x-python',
        etag: `"${digest}"`,
        'content-length': String(source.length),
      });
      expect(head.text ?? '').toBe('');
    });

    it('answers one range 206, a suffix, a range past the end 416, and the whole file when If-Range names other bytes', async () => {
      const { source } = await approved('Served in parts');
      const digest = sha256(source);
      const first = await file(digest).set('Range', 'bytes=0-9').expect(206);
      expect(first.body).toEqual(source.subarray(0, 10));
      expect(first.headers['content-range']).toBe(`bytes 0-9/${source.length}`);
      const tail = await file(digest).set('Range', 'bytes=-5').expect(206);
      expect(tail.body).toEqual(source.subarray(source.length - 5));
      expect(tail.headers['content-range']).toBe(
        `bytes ${source.length - 5}-${source.length - 1}/${source.length}`,
      );
      const past = await api(t, bob, 'get', `community-plugins/files/${digest}`)
        .set('Range', `bytes=${source.length}-`)
        .expect(416);
      expect(past.body).toEqual({ status: 'fail', message: 'Range not satisfiable' });
      expect(past.headers['content-range']).toBe(`bytes */${source.length}`);
      const changed = await file(digest).set('Range', 'bytes=0-9').set('If-Range', '"other"').expect(200);
      expect(changed.body).toEqual(source);
      const matching = await file(digest)
        .set('Range', 'bytes=0-9')
        .set('If-Range', `"${digest}"`)
        .expect(206);
      expect(matching.body).toEqual(source.subarray(0, 10));
      // Several ranges are answered whole (RFC 9110 14.2 lets a server).
      expect((await file(digest).set('Range', 'bytes=0-1,4-5').expect(200)).body).toEqual(source);
    });

    it('answers If-None-Match with the digest 304 without a body', async () => {
      const { source } = await approved('Revalidated file');
      const digest = sha256(source);
      const answer = await api(t, bob, 'get', `community-plugins/files/${digest}`)
        .set('If-None-Match', `"${digest}"`)
        .expect(304);
      expect(answer.text ?? '').toBe('');
      expect(answer.headers.etag).toBe(`"${digest}"`);
    });

    it('answers a pending, rejected, revoked, unknown or misspelt digest with the same 404', async () => {
      const pending = await uploaded('Still pending');
      const rejected = await uploaded('Rejected file');
      await api(t, boss, 'post', `community-plugins/${rejected.id}/reject/`)
        .send({ reason: 'No' })
        .expect(200);
      const revoked = await approved('Revoked file');
      expect((await file(sha256(revoked.source)).expect(200)).body).toEqual(revoked.source);
      await revoke(revoked.id);
      const digests = [
        sha256(pending.source),
        sha256(rejected.source),
        sha256(revoked.source),
        'a'.repeat(64),
        sha256(revoked.source).toUpperCase(),
        'not-a-digest',
      ];
      for (const digest of digests) {
        const answer = await api(t, bob, 'get', `community-plugins/files/${digest}`).expect(404);
        expect(answer.body).toEqual(FILE_NOT_FOUND);
        expect(answer.headers['cache-control']).toBe('no-store');
      }
      // The uploader and admins get the same answer: it is the manifest's file, not a view.
      expect(
        (await api(t, alice, 'get', `community-plugins/files/${sha256(pending.source)}`).expect(404)).body,
      ).toEqual(FILE_NOT_FOUND);
      expect(
        (await api(t, boss, 'get', `community-plugins/files/${sha256(pending.source)}`).expect(404)).body,
      ).toEqual(FILE_NOT_FOUND);
    });

    it('needs a token while anonymous reads are off', async () => {
      const { source } = await approved('Members only file');
      const answer = await api(t, null, 'get', `community-plugins/files/${sha256(source)}`).expect(401);
      expect(answer.body).toEqual({ status: 'fail', message: 'Unauthorized' });
      await api(t, null, 'get', 'community-plugins/manifest/').expect(401);
      await api(t, null, 'get', 'community-plugins/manifest/key/').expect(401);
    });

    it('answers a file that no longer hashes to its digest 503, logs it, and audits it once per content found', async () => {
      const { id, source } = await approved('Tampered on disk');
      const digest = sha256(source);
      const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
        id,
      ])) as Array<{
        file_path: string;
      }>;
      const tampered = Buffer.concat([source, Buffer.from('\nprint("owned")\n')]);
      writeFileSync(join(t.config.communityPluginDir, row.file_path), tampered);
      appLog.take();
      for (let request = 0; request < 2; request += 1) {
        const answer = await api(t, bob, 'get', `community-plugins/files/${digest}`).expect(503);
        expect(answer.body).toEqual({ status: 'fail', message: 'Plugin file unavailable' });
      }
      expect(appLog.take().map((entry) => `${entry.level} ${entry.context} ${entry.message}`)).toEqual([
        `error PluginFiles Plugin ${id} (Tampered on disk): not served, its file has sha256 ${sha256(tampered)}; the manifest lists ${digest}`,
        `error PluginFiles Plugin ${id} (Tampered on disk): not served, its file has sha256 ${sha256(tampered)}; the manifest lists ${digest}`,
      ]);
      const entries = (await t.dataSource.query(
        "SELECT actor, subject, details FROM audit_log WHERE action = 'file_mismatch' AND subject = ?",
        [`plugin:${id}`],
      )) as Array<{ actor: string; subject: string; details: string }>;
      expect(entries).toEqual([
        {
          actor: 'system',
          subject: `plugin:${id}`,
          details: JSON.stringify({ found: sha256(tampered), sha256: digest }),
        },
      ]);
      // A range of it is refused as well: no byte of other content goes out.
      await api(t, bob, 'get', `community-plugins/files/${digest}`).set('Range', 'bytes=0-0').expect(503);
      writeFileSync(join(t.config.communityPluginDir, row.file_path), source);
      expect((await file(digest).expect(200)).body).toEqual(source);
    });
  });

  describe('conditional answers', () => {
    it('a catalogue page carries an ETag and no-cache; If-None-Match answers 304, a rating changes the tag', async () => {
      const { id } = await approved('Rated while polled');
      const page = await api(t, bob, 'get', 'community-plugins/?limit=5').expect(200);
      expect(page.headers['cache-control']).toBe('private, no-cache');
      expect(page.headers.vary).toBe('Authorization');
      const etag = page.headers.etag as string;
      expect(etag).toMatch(/^"r\d+\.[\d.]+"$/);
      const again = await api(t, bob, 'get', 'community-plugins/?limit=5')
        .set('If-None-Match', etag)
        .expect(304);
      expect(again.text ?? '').toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe('private, no-cache');
      // Unchanged bodies: the same answer as without the header.
      const full = await api(t, bob, 'get', 'community-plugins/?limit=5')
        .set('If-None-Match', '"other"')
        .expect(200);
      expect(full.body).toEqual(page.body);

      await api(t, bob, 'put', `community-plugins/${id}/rating`).send({ stars: 4 }).expect(200);
      const rated = await api(t, bob, 'get', 'community-plugins/?limit=5')
        .set('If-None-Match', etag)
        .expect(200);
      expect(rated.headers.etag).not.toBe(etag);
      expect(dataOf<{ plugins: Array<{ id: number; rating: number }> }>(rated).plugins).toContainEqual(
        expect.objectContaining({ id, rating: 4 }),
      );
      // Another reader's tag is not this reader's: their views may differ (an owner's).
      await api(t, alice, 'get', 'community-plugins/?limit=5')
        .set('If-None-Match', rated.headers.etag as string)
        .expect(200);
    });

    it("one plugin's view: 304 while unchanged, a full answer after its revocation", async () => {
      const { id } = await approved('Detail polled');
      const detail = await api(t, bob, 'get', `community-plugins/${id}/`).expect(200);
      const etag = detail.headers.etag as string;
      expect(etag).toMatch(new RegExp(`^"r${bob.id}\\.[\\d.]+"$`));
      await api(t, bob, 'get', `community-plugins/${id}/`).set('If-None-Match', etag).expect(304);
      // Its uploader's view is another answer, with a tag of its own.
      const owner = await api(t, alice, 'get', `community-plugins/${id}/`)
        .set('If-None-Match', etag)
        .expect(200);
      expect(owner.headers.etag).toMatch(new RegExp(`^"r${alice.id}\\.`));
      await revoke(id);
      const gone = await api(t, bob, 'get', `community-plugins/${id}/`)
        .set('If-None-Match', etag)
        .expect(404);
      expect(gone.body).toEqual({ status: 'fail', message: 'Plugin not found' });
      expect(gone.headers.etag).toBeUndefined();
    });

    it('admins get no ETag: their view shows the re-check verdicts, which no counter versions', async () => {
      const page = await api(t, boss, 'get', 'community-plugins/').expect(200);
      expect(page.headers.etag).toBeUndefined();
      expect(page.headers['cache-control']).toBe('private, no-cache');
      await api(t, boss, 'get', 'community-plugins/').set('If-None-Match', '*').expect(200);
    });

    it('the manifest: a weak ETag, 304 while unchanged and more than half of its lifetime left, and after an approval a full one', async () => {
      const manifest = await api(t, bob, 'get', 'community-plugins/manifest/').expect(200);
      const etag = manifest.headers.etag as string;
      expect(etag).toMatch(/^W\/"m\.[\d.]+\.\d+"$/);
      expect(manifest.headers['cache-control']).toBe('private, no-cache');
      await api(t, bob, 'get', 'community-plugins/manifest/').set('If-None-Match', etag).expect(304);
      t.clock.advance(HALF_DAY_MS + 1000);
      const renewed = await api(t, bob, 'get', 'community-plugins/manifest/')
        .set('If-None-Match', etag)
        .expect(200);
      t.clock.reset();
      expect(renewed.headers.etag).not.toBe(etag);

      await approved('Approved while polled');
      const after = await api(t, bob, 'get', 'community-plugins/manifest/')
        .set('If-None-Match', renewed.headers.etag as string)
        .expect(200);
      expect(
        dataOf<{ plugins: Array<{ name: string }> }>(after).plugins.map((entry) => entry.name),
      ).toContain('Approved while polled');
    });

    it("the key: its fingerprint's ETag, 304 for it", async () => {
      const key = await api(t, bob, 'get', 'community-plugins/manifest/key/').expect(200);
      expect(key.headers.etag).toBe(`"k.${dataOf<{ fingerprint: string }>(key).fingerprint}"`);
      await api(t, bob, 'get', 'community-plugins/manifest/key/')
        .set('If-None-Match', key.headers.etag as string)
        .expect(304);
    });
  });
});

describe('PLUGIN_ANONYMOUS_READS=on', () => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({
      smtp,
      env: { SVC_ADMIN_EMAILS: 'boss@example.com', PLUGIN_ANONYMOUS_READS: 'on' },
    });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('the manifest, its key and its files are read without a token, marked public; a token sent is still checked; the rest needs one', async () => {
    const alice = await signUpAs(t, smtp, 'alice');
    const boss = await signUpAs(t, smtp, 'boss');
    const source = benignPlugin('Public plugin');
    const uploadedPlugin = await upload(t, alice.token, {
      fields: validFields('Public plugin'),
      file: source,
    });
    await readThenApprove(t, boss.token, dataOf<{ id: number }>(uploadedPlugin).id).expect(200);

    const manifest = await api(t, null, 'get', 'community-plugins/manifest/').expect(200);
    expect(manifest.headers['cache-control']).toBe('public, no-cache');
    expect(
      dataOf<{ plugins: Array<{ sha256: string }> }>(manifest).plugins.map((entry) => entry.sha256),
    ).toEqual([sha256(source)]);
    const key = await api(t, null, 'get', 'community-plugins/manifest/key/').expect(200);
    expect(key.headers['cache-control']).toBe('public, no-cache');
    const served = await binary(api(t, null, 'get', `community-plugins/files/${sha256(source)}`)).expect(200);
    expect(served.body).toEqual(source);

    const badToken = await api(t, { token: 'not-a-token' }, 'get', 'community-plugins/manifest/').expect(401);
    expect(badToken.body).toEqual({ status: 'fail', message: 'Unauthorized' });
    await api(t, null, 'get', 'community-plugins/').expect(401);
    await api(t, null, 'get', 'community-plugins/me/').expect(401);
  });
});
