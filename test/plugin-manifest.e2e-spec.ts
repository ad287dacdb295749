import { execFile } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { canonicalJson } from '../src/common/canonical-json';
import { SmtpSink } from './helpers/smtp-sink';
import {
  benignPlugin,
  databaseUrlOf,
  marketplaceApp,
  readThenApprove,
  SignedInUser,
  upload,
  validFields,
} from './helpers/marketplace';
import { bootApp, TestApp } from './helpers/test-app';

const ROOT = join(__dirname, '..');
const LOADER = join(ROOT, 'docs/examples/manifest_loader.py');
const DAY_MS = 86_400_000;
const SKEW_MS = 5 * 60_000;

interface Entry {
  id: number;
  name: string;
  version: string;
  sha256: string;
}
interface Manifest {
  serial: number;
  issued_at: string;
  generated_at: string;
  expires_at: string;
  plugins: Entry[];
  signature: string;
}

jest.setTimeout(180_000);

const dataOf = <T>(response: { body: unknown }) => (response.body as { data: T }).data;

describe('the signed manifest cannot be replayed', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let boss: SignedInUser;
  let publicKeyFile: string;
  const work = mkdtempSync(join(tmpdir(), 'manifest-loader-'));
  let files = 0;

  const fetchManifest = async (app: TestApp = t): Promise<Manifest> =>
    dataOf<Manifest>(
      await app
        .http()
        .get('/api/v1/community-plugins/manifest/')
        .set('Authorization', `Bearer ${bob.token}`)
        .expect(200),
    );

  /** Runs the documented loader on `manifest` with the state file `state`: its exit code and one line. */
  const load = (manifest: unknown, state: string, pluginDir?: string, keyFile = publicKeyFile) => {
    const file = join(work, `manifest-${(files += 1)}.json`);
    writeFileSync(file, typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
    return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        'python3',
        [LOADER, file, keyFile, state, ...(pluginDir ? [pluginDir] : [])],
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      ),
    );
  };
  const freshState = () => join(mkdtempSync(join(work, 'state-')), 'serial.json');
  const accepted = (manifest: Manifest) => ({
    code: 0,
    stdout: `accepted: serial ${manifest.serial}, ${manifest.plugins.length} plugins, expires ${manifest.expires_at}\n`,
    stderr: '',
  });

  async function uploaded(name: string): Promise<number> {
    const response = await upload(t, alice.token, { fields: validFields(name), file: benignPlugin(name) });
    expect(response.status).toBe(201);
    return dataOf<{ id: number }>(response).id;
  }
  const revoke = (id: number) =>
    t
      .http()
      .post(`/api/v1/community-plugins/${id}/reject/`)
      .set('Authorization', `Bearer ${boss.token}`)
      .send({ reason: 'Revoked: it phones home' });

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, bob, boss },
    } = await marketplaceApp(smtp, ['alice', 'bob', 'boss']));
    const key = dataOf<{ public_key_pem: string }>(
      await t
        .http()
        .get('/api/v1/community-plugins/manifest/key/')
        .set('Authorization', `Bearer ${bob.token}`)
        .expect(200),
    );
    publicKeyFile = join(work, 'pinned-key.pem');
    writeFileSync(publicKeyFile, key.public_key_pem);
  });
  afterEach(() => t.clock.reset());
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('signs a serial (the audit head), issued_at and expires_at one day later', async () => {
    t.clock.freeze();
    const manifest = await fetchManifest();
    expect(Object.keys(manifest).sort()).toEqual([
      'expires_at',
      'generated_at',
      'issued_at',
      'plugins',
      'serial',
      'signature',
    ]);
    expect(manifest.issued_at).toBe(t.clock.now().toISOString());
    expect(manifest.generated_at).toBe(manifest.issued_at);
    expect(Date.parse(manifest.expires_at) - Date.parse(manifest.issued_at)).toBe(DAY_MS);
    expect(manifest.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const [head] = (await t.dataSource.query('SELECT entries FROM audit_chain WHERE id = 1')) as Array<{
      entries: number | string;
    }>;
    expect(manifest.serial).toBe(Number(head.entries));
    // Nothing approved yet: the serial comes with an empty list too.
    expect(manifest.plugins).toEqual([]);
    expect(await load(manifest, freshState())).toEqual(accepted(manifest));
  });

  it('a revocation raises the serial; with the newer state the loader refuses the older manifest and accepts the newer again', async () => {
    const id = await uploaded('Revoked later');
    await readThenApprove(t, boss.token, id).expect(200);
    const before = await fetchManifest();
    expect(before.plugins.map((entry) => entry.id)).toContain(id);

    await revoke(id).expect(200);
    const after = await fetchManifest();
    expect(after.plugins.map((entry) => entry.id)).not.toContain(id);
    expect(after.serial).toBeGreaterThan(before.serial);

    const state = freshState();
    expect(await load(after, state)).toEqual(accepted(after));
    expect(JSON.parse(readFileSync(state, 'utf8'))).toEqual({ serial: after.serial });
    expect(await load(before, state)).toEqual({
      code: 1,
      stdout: `refused: serial ${before.serial} is lower than serial ${after.serial} already loaded: an older manifest replayed\n`,
      stderr: '',
    });
    // The same state fetched again (equal serial) is accepted, and a refusal changed nothing.
    expect(await load(after, state)).toEqual(accepted(after));
    expect(await load(await fetchManifest(), state)).toMatchObject({ code: 0 });
    expect(JSON.parse(readFileSync(state, 'utf8'))).toEqual({ serial: after.serial });

    // Without that state the older one loads: the refusal is the state's doing.
    const other = freshState();
    expect(await load(before, other)).toEqual(accepted(before));
    expect(await load(after, other)).toEqual(accepted(after));
  });

  it('refuses a manifest past expires_at beyond the clock skew it allows, and accepts one within it', async () => {
    // The server's clock moved back: the manifest was issued long enough ago to have expired.
    t.clock.advance(-(DAY_MS + SKEW_MS + 10 * 60_000));
    const expired = await fetchManifest();
    t.clock.reset();
    expect(Date.parse(expired.expires_at)).toBeLessThan(Date.now() - SKEW_MS);
    const state = freshState();
    const refusal = await load(expired, state);
    expect(refusal.code).toBe(1);
    expect(refusal.stdout).toMatch(
      new RegExp(
        `^refused: the manifest expired at ${expired.expires_at.replace(/\./g, '\\.')} \\(now \\S+, 300 s of clock skew allowed\\): fetch a fresh one\n$`,
      ),
    );

    // Two minutes past expires_at, within the five of skew (three minutes to spare for the run).
    t.clock.advance(-(DAY_MS + 2 * 60_000));
    const barely = await fetchManifest();
    t.clock.reset();
    expect(Date.parse(barely.expires_at)).toBeLessThan(Date.now());
    expect(await load(barely, state)).toEqual(accepted(barely));
  });

  it('a tampered serial or expires_at fails the signature, and the state is left as it was', async () => {
    const manifest = await fetchManifest();
    const state = freshState();
    expect(await load(manifest, state)).toEqual(accepted(manifest));
    const badSignature = {
      code: 1,
      stdout: 'refused: the signature does not verify with the pinned key\n',
      stderr: '',
    };
    expect(await load({ ...manifest, serial: manifest.serial + 1000 }, state)).toEqual(badSignature);
    const later = new Date(Date.parse(manifest.expires_at) + 30 * DAY_MS).toISOString();
    expect(await load({ ...manifest, expires_at: later }, state)).toEqual(badSignature);
    expect(await load({ ...manifest, signature: 'not base64!' }, state)).toEqual(badSignature);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toEqual({ serial: manifest.serial });

    const unsigned: Partial<Manifest> = { ...manifest };
    delete unsigned.serial;
    expect(await load(unsigned, state)).toEqual(badSignature);
  });

  it('refuses everything while its state file is unreadable', async () => {
    const state = freshState();
    writeFileSync(state, '{"serial": "7"}');
    expect(await load(await fetchManifest(), state)).toEqual({
      code: 1,
      stdout: `refused: the state file ${state} is unreadable: repair or remove it\n`,
      stderr: '',
    });
  });

  it('names each other refusal in one line: a manifest without serial or expiry, unsigned, not JSON, a key not Ed25519', async () => {
    // Signed by a key of the test's own, so that the loader reaches the checks after the signature.
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const ownKeyFile = join(work, 'own-key.pem');
    writeFileSync(ownKeyFile, publicKey.export({ type: 'spki', format: 'pem' }));
    const signed = (body: Record<string, unknown>) => ({
      ...body,
      signature: sign(null, Buffer.from(canonicalJson(body)), privateKey).toString('base64'),
    });
    const refused = (reason: string) => ({ code: 1, stdout: `refused: ${reason}\n`, stderr: '' });
    const state = freshState();
    const current = await fetchManifest();
    const { serial, expires_at, ...rest } = current;
    delete (rest as Partial<Manifest>).signature;

    // What a server older than the serial signed.
    expect(
      await load(signed({ generated_at: current.issued_at, plugins: [] }), state, undefined, ownKeyFile),
    ).toEqual(refused('the manifest has no serial (a server older than the replay defence)'));
    expect(
      await load(signed({ ...rest, serial: String(serial), expires_at }), state, undefined, ownKeyFile),
    ).toEqual(refused('the manifest has no serial (a server older than the replay defence)'));
    expect(await load(signed({ ...rest, serial }), state, undefined, ownKeyFile)).toEqual(
      refused('the manifest has no expires_at or no plugins'),
    );
    expect(
      await load(
        signed({ ...rest, serial, expires_at: '2026-01-01T00:00:00' }),
        state,
        undefined,
        ownKeyFile,
      ),
    ).toEqual(refused('the manifest has no expires_at or no plugins'));
    expect(await load({ ...rest, serial, expires_at }, state)).toEqual(
      refused('the manifest has no signature'),
    );
    expect(await load('{"serial": 1', state)).toEqual(
      refused(`${join(work, `manifest-${files}.json`)} is not JSON`),
    );
    const rsaKeyFile = join(work, 'rsa-key.pem');
    writeFileSync(
      rsaKeyFile,
      generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }),
    );
    expect(await load(current, state, undefined, rsaKeyFile)).toEqual(
      refused('the pinned key is not an Ed25519 public key'),
    );
    // None of them was loaded: the state file was never written.
    expect(() => readFileSync(state)).toThrow();
  });

  it('PLUGIN_MANIFEST_TTL_SECONDS sets expires_at', async () => {
    const short = await bootApp({
      databaseUrl: databaseUrlOf(t),
      dataDir: dirname(t.config.communityPluginDir),
      env: { PLUGIN_MANIFEST_TTL_SECONDS: '60' },
    });
    try {
      const manifest = await fetchManifest(short);
      expect(Date.parse(manifest.expires_at) - Date.parse(manifest.issued_at)).toBe(60_000);
    } finally {
      await short.close();
    }
  });

  it('docs/plugin-manifest.md shows the loader whole; it names the listed plugins whose file is not there', async () => {
    const doc = readFileSync(join(ROOT, 'docs/plugin-manifest.md'), 'utf8');
    expect(/```python\n([\s\S]*?)```/.exec(doc)?.[1]).toBe(readFileSync(LOADER, 'utf8'));

    const id = await uploaded('Loaded by digest é');
    await readThenApprove(t, boss.token, id).expect(200);
    const manifest = await fetchManifest();
    const withFiles = await load(manifest, freshState(), t.config.communityPluginDir);
    expect(withFiles).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/; (\d+) to load; missing: \[\]\n$/),
    });
    const withoutFiles = await load(manifest, freshState(), mkdtempSync(join(work, 'no-plugins-')));
    expect(withoutFiles).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`; 0 to load; missing: [`),
    });
    expect(withoutFiles.stdout).toContain("'Loaded by digest \u00e9'");
  });

  it('manifests fetched while decisions commit list exactly the state after `serial` audit entries', async () => {
    const revoked: number[] = [];
    for (let n = 0; n < 10; n += 1) {
      const id = await uploaded(`Revoked in the race ${n}`);
      await readThenApprove(t, boss.token, id).expect(200);
      revoked.push(id);
    }
    const approved: number[] = [];
    for (let n = 0; n < 20; n += 1) approved.push(await uploaded(`Approved in the race ${n}`));
    const ours = [...revoked, ...approved];

    const first = await fetchManifest();
    let deciding = true;
    const decisions = Promise.all([
      ...approved.map((id) => readThenApprove(t, boss.token, id).expect(200)),
      ...revoked.map((id) => revoke(id).expect(200)),
    ]).finally(() => (deciding = false));
    // Three readers fetch one after another for as long as the decisions take, so fetches fall
    // between, during and across their commits whatever the machine's speed.
    const manifests: Manifest[] = [];
    const reader = async () => {
      while (deciding && manifests.length < 300) manifests.push(await fetchManifest());
    };
    await Promise.all([decisions, reader(), reader(), reader()]);
    const last = await fetchManifest();
    expect(last.serial).toBeGreaterThanOrEqual(first.serial + ours.length);

    // Each plugin's decisions in chain order: listed at serial S iff its last decision with
    // seq <= S approved it. (Entries and head read by two statements fail this on MariaDB.)
    const rows = (await t.dataSource.query(
      "SELECT seq, action, subject, details FROM audit_log WHERE action IN ('approve', 'reject') ORDER BY seq",
    )) as Array<{ seq: number | string; action: string; subject: string; details: string }>;
    const listedAt = (id: number, serial: number): boolean => {
      let listed = false;
      for (const row of rows) {
        if (row.subject !== `plugin:${id}` || Number(row.seq) > serial) continue;
        if (row.action === 'reject') listed = false;
        else if ((JSON.parse(row.details) as { approved: boolean }).approved) listed = true;
      }
      return listed;
    };
    const mismatches = [first, ...manifests, last].flatMap((manifest) =>
      ours
        .filter((id) => manifest.plugins.some((entry) => entry.id === id) !== listedAt(id, manifest.serial))
        .map((id) => `serial ${manifest.serial}: plugin ${id}`),
    );
    expect(mismatches).toEqual([]);
    // The two ends are the states before and after every decision.
    expect(ours.filter((id) => first.plugins.some((entry) => entry.id === id))).toEqual(revoked);
    expect(ours.filter((id) => last.plugins.some((entry) => entry.id === id))).toEqual(approved);
  });
});
