import { execFile, spawn } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from './helpers/client';
import {
  benignPlugin,
  marketplaceApp,
  readThenApprove,
  SignedInUser,
  upload,
  validFields,
} from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { appLog, TestApp } from './helpers/test-app';

const ROOT = join(__dirname, '..');
const INSTALLER = join(ROOT, 'clients/python/svc_plugins.py');
const DAY_MS = 86_400_000;

jest.setTimeout(180_000);

interface Entry {
  id: number;
  name: string;
  version: string;
  sha256: string;
}
interface Manifest {
  serial: number;
  expires_at: string;
  plugins: Entry[];
}
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}
type Rewrite = (path: string, answer: Answer) => Answer | 'stall';

const dataOf = <T>(response: { body: unknown }) => (response.body as { data: T }).data;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** The name the installer gives an entry's file (file_name in svc_plugins.py). */
const fileOf = (entry: Entry) =>
  `${
    entry.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 64) || 'plugin'
  }_${entry.sha256}.py`;

/**
 * Between the installer and the app: forwards each request to the app (Fastify's inject, so the
 * app needs no port of its own), records what the app answered, and lets a test rewrite an
 * answer (a tampered manifest, a replayed one, altered bytes) or stall one half sent.
 */
class Proxy {
  private server: Server | null = null;
  readonly seen: Array<{ path: string; status: number }> = [];
  rewrite: Rewrite | null = null;
  /** Resolved when an answer is stalled. */
  stalled: Promise<string> = new Promise(() => undefined);
  private onStall: (path: string) => void = () => undefined;

  constructor(private readonly t: TestApp) {}

  async start(): Promise<string> {
    this.server = createServer((request, response) => void this.forward(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  expectStall(): void {
    this.stalled = new Promise((resolve) => (this.onStall = resolve));
  }

  private async forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = request.url ?? '/';
    const headers = { ...request.headers };
    delete headers.host;
    if (this.rewrite) delete headers['if-none-match'];
    const forwarded = await this.t.app
      .getHttpAdapter()
      .getInstance()
      .inject({ method: request.method as 'GET', url: path, headers });
    this.seen.push({ path, status: forwarded.statusCode });
    let answer: Answer | 'stall' = {
      status: forwarded.statusCode,
      headers: forwarded.headers as Record<string, string>,
      body: forwarded.rawPayload,
    };
    if (this.rewrite) answer = this.rewrite(path, answer);
    if (answer === 'stall') {
      const body = forwarded.rawPayload;
      response.writeHead(200, { 'content-type': 'text/x-python', 'content-length': String(body.length) });
      response.write(body.subarray(0, body.length >> 1));
      this.onStall(path);
      return;
    }
    const sent: Record<string, string> = { ...answer.headers, 'content-length': String(answer.body.length) };
    delete sent['transfer-encoding'];
    delete sent.connection;
    response.writeHead(answer.status, sent);
    response.end(answer.body);
  }
}

/** Every file under `directory` with the sha256 of its content: what a sync may or may not change. */
function snapshot(directory: string): Record<string, string> {
  const files: Record<string, string> = {};
  if (!existsSync(directory)) return files;
  const walk = (dir: string, prefix: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path, `${prefix}${name}/`);
      else files[`${prefix}${name}`] = sha256(readFileSync(path));
    }
  };
  walk(directory, '');
  return files;
}

const pluginFilesIn = (directory: string) =>
  readdirSync(directory)
    .filter((name) => name.endsWith('.py'))
    .sort();

describe('the installer, clients/python/svc_plugins.py (issue 44)', () => {
  const smtp = new SmtpSink();
  const work = mkdtempSync(join(tmpdir(), 'svc-plugins-'));
  let t: TestApp;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let boss: SignedInUser;
  let proxy: Proxy;
  let server: string;
  let dirs = 0;

  const freshDir = () => join(work, `install-${(dirs += 1)}`);
  const manifestNow = async () =>
    dataOf<Manifest>(await api(t, bob, 'get', 'community-plugins/manifest/').expect(200));
  const approved = async (name: string): Promise<{ id: number; source: Buffer }> => {
    const source = benignPlugin(name);
    const response = await upload(t, alice.token, { fields: validFields(name), file: source });
    expect(response.status).toBe(201);
    const id = dataOf<{ id: number }>(response).id;
    await readThenApprove(t, boss.token, id).expect(200);
    return { id, source };
  };
  const revoke = (id: number) =>
    api(t, boss, 'post', `community-plugins/${id}/reject/`).send({ reason: 'Revoked' }).expect(200);
  const filePathOf = async (id: number) => {
    const [row] = (await t.dataSource.query('SELECT file_path FROM user_plugins WHERE id = ?', [
      id,
    ])) as Array<{
      file_path: string;
    }>;
    return join(t.config.communityPluginDir, row.file_path);
  };

  /** One run of the installer, its token from SVC_TOKEN unless the arguments name one. */
  const sync = (dir: string, ...extra: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        'python3',
        [INSTALLER, 'sync', '--server', server, '--dir', dir, ...extra],
        { env: { ...process.env, SVC_TOKEN: bob.token } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      ),
    );
  const installLines = (entries: Entry[], prefix = '') =>
    entries.map((entry) => `${prefix}install ${entry.name} ${entry.version} (${fileOf(entry)})\n`).join('');
  /** A directory synced to the current manifest. */
  const syncedDir = async () => {
    const dir = freshDir();
    expect((await sync(dir)).code).toBe(0);
    return dir;
  };

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      users: { alice, bob, boss },
    } = await marketplaceApp(smtp, ['alice', 'bob', 'boss']));
    proxy = new Proxy(t);
    server = await proxy.start();
    await approved('Installed first');
    await approved('Installed second');
  });
  afterEach(() => {
    proxy.rewrite = null;
    t.clock.reset();
  });
  afterAll(async () => {
    await proxy.stop();
    await t.close();
    await smtp.stop();
  });

  it("verifies Ed25519 as RFC 8032 says (the installer's own tests, with the RFC's vectors)", async () => {
    const run = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(
        'python3',
        ['-m', 'unittest', join(ROOT, 'clients/python/test_svc_plugins.py')],
        (error, _out, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr }),
      ),
    );
    expect(run.stderr).toMatch(/Ran 6 tests in [\d.]+s\n\nOK\n$/);
    expect(run.code).toBe(0);
  });

  it('installs every listed file, checked by digest, pins the key and records the serial', async () => {
    const manifest = await manifestNow();
    const dir = freshDir();
    const run = await sync(dir);
    expect(run).toEqual({
      code: 0,
      stdout:
        installLines(manifest.plugins) +
        `apply serial ${manifest.serial}: ${manifest.plugins.length} installed, 0 repaired, 0 removed, 0 unchanged\n`,
      stderr: '',
    });
    expect(pluginFilesIn(dir)).toEqual(manifest.plugins.map(fileOf).sort());
    for (const entry of manifest.plugins) {
      expect(sha256(readFileSync(join(dir, fileOf(entry))))).toBe(entry.sha256);
    }
    const state = JSON.parse(readFileSync(join(dir, '.svc-plugins/state.json'), 'utf8')) as {
      serial: number;
      files: Record<string, Entry>;
    };
    expect(state.serial).toBe(manifest.serial);
    expect(state.files).toEqual(Object.fromEntries(manifest.plugins.map((entry) => [fileOf(entry), entry])));
    const key = dataOf<{ public_key_pem: string }>(
      await api(t, bob, 'get', 'community-plugins/manifest/key/').expect(200),
    );
    expect(readFileSync(join(dir, '.svc-plugins/key.pem'), 'utf8')).toBe(key.public_key_pem);
  });

  it('a second run changes nothing and is answered 304 alone', async () => {
    const dir = await syncedDir();
    const manifest = await manifestNow();
    const before = snapshot(dir);
    const seen = proxy.seen.length;
    expect(await sync(dir)).toEqual({
      code: 0,
      stdout: `apply serial ${manifest.serial}: 0 installed, 0 repaired, 0 removed, ${manifest.plugins.length} unchanged\n`,
      stderr: '',
    });
    expect(proxy.seen.slice(seen)).toEqual([{ path: '/api/v1/community-plugins/manifest/', status: 304 }]);
    expect(snapshot(dir)).toEqual(before);
  });

  it('--dry-run says what it would do and writes nothing; --token is the token too', async () => {
    const manifest = await manifestNow();
    const dir = freshDir();
    const run = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(
        'python3',
        [INSTALLER, 'sync', '--server', server, '--dir', dir, '--token', bob.token, '--dry-run'],
        { env: { ...process.env, SVC_TOKEN: '' } },
        (error, stdout) => resolve({ code: error ? Number(error.code) : 0, stdout }),
      ),
    );
    expect(run).toEqual({
      code: 0,
      stdout:
        installLines(manifest.plugins, 'would ') +
        `would apply serial ${manifest.serial}: ${manifest.plugins.length} installed, 0 repaired, 0 removed, 0 unchanged\n`,
    });
    expect(existsSync(dir)).toBe(false);
  });

  it('an approval then a sync installs it; a revocation then a sync removes it', async () => {
    const dir = await syncedDir();
    const { id } = await approved('Approved later');
    const withIt = await manifestNow();
    const entry = withIt.plugins.find((listed) => listed.id === id)!;
    expect(await sync(dir)).toEqual({
      code: 0,
      stdout:
        installLines([entry]) +
        `apply serial ${withIt.serial}: 1 installed, 0 repaired, 0 removed, ${withIt.plugins.length - 1} unchanged\n`,
      stderr: '',
    });
    expect(sha256(readFileSync(join(dir, fileOf(entry))))).toBe(entry.sha256);

    await revoke(id);
    const without = await manifestNow();
    expect(await sync(dir)).toEqual({
      code: 0,
      stdout:
        `remove ${entry.name} ${entry.version} (${fileOf(entry)})\n` +
        `apply serial ${without.serial}: 0 installed, 0 repaired, 1 removed, ${without.plugins.length} unchanged\n`,
      stderr: '',
    });
    expect(pluginFilesIn(dir)).toEqual(without.plugins.map(fileOf).sort());
  });

  it('a file tampered with on the server fails the sync, and what it had written is removed again', async () => {
    const dir = await syncedDir();
    const before = snapshot(dir);
    await approved('Fetched before the tampered one');
    const tampered = await approved('Tampered on the server');
    const path = await filePathOf(tampered.id);
    writeFileSync(path, Buffer.concat([tampered.source, Buffer.from('\nprint("owned")\n')]));
    const run = await sync(dir);
    writeFileSync(path, tampered.source);
    expect(run).toEqual({
      code: 1,
      stdout: `failed: GET files/${sha256(tampered.source)} answered 503: Plugin file unavailable\n`,
      stderr: '',
    });
    expect(snapshot(dir)).toEqual(before);
    appLog.take();
    // Once the file has its bytes again, the same sync installs both.
    expect((await sync(dir)).stdout).toMatch(/: 2 installed, 0 repaired, 0 removed, \d+ unchanged\n$/);
  });

  it('bytes altered on the way are refused by their digest', async () => {
    const dir = await syncedDir();
    const before = snapshot(dir);
    const { source } = await approved('Altered on the way');
    const entry = (await manifestNow()).plugins.find((listed) => listed.sha256 === sha256(source))!;
    proxy.rewrite = (path, answer) =>
      path.includes('/files/') ? { ...answer, body: Buffer.concat([answer.body, Buffer.from('#')]) } : answer;
    expect(await sync(dir)).toEqual({
      code: 1,
      stdout: `refused: the bytes sent for ${entry.name} ${entry.version} do not hash to ${entry.sha256}\n`,
      stderr: '',
    });
    expect(snapshot(dir)).toEqual(before);
  });

  it('a tampered manifest is refused, and so is a manifest signed by a key other than the pinned one', async () => {
    const dir = await syncedDir();
    await approved('Behind a tampered manifest');
    const before = snapshot(dir);
    const refusedSignature = {
      code: 1,
      stdout: 'refused: the signature does not verify with the pinned key\n',
      stderr: '',
    };
    proxy.rewrite = (path, answer) => {
      if (!path.endsWith('/manifest/')) return answer;
      const body = JSON.parse(answer.body.toString()) as { data: Manifest };
      body.data.plugins[0].sha256 = sha256(Buffer.from('other bytes'));
      return { ...answer, body: Buffer.from(JSON.stringify(body)) };
    };
    expect(await sync(dir)).toEqual(refusedSignature);
    expect(snapshot(dir)).toEqual(before);

    proxy.rewrite = null;
    const otherKey = join(work, 'other-key.pem');
    writeFileSync(otherKey, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
    expect(await sync(dir, '--key', otherKey)).toEqual(refusedSignature);
    expect(snapshot(dir)).toEqual(before);
  });

  it('a replayed older manifest is refused', async () => {
    const older = await api(t, bob, 'get', 'community-plugins/manifest/').expect(200);
    await approved('After the replayed manifest');
    const dir = await syncedDir();
    const applied = await manifestNow();
    const before = snapshot(dir);
    proxy.rewrite = (path, answer) =>
      path.endsWith('/manifest/') ? { ...answer, status: 200, body: Buffer.from(older.text) } : answer;
    expect(await sync(dir)).toEqual({
      code: 1,
      stdout: `refused: serial ${dataOf<Manifest>(older).serial} is lower than serial ${applied.serial} already applied: an older manifest replayed\n`,
      stderr: '',
    });
    expect(snapshot(dir)).toEqual(before);
  });

  it('an expired manifest is refused', async () => {
    const dir = await syncedDir();
    const before = snapshot(dir);
    t.clock.advance(-2 * DAY_MS);
    const expired = await api(t, bob, 'get', 'community-plugins/manifest/').expect(200);
    t.clock.reset();
    const expiresAt = dataOf<Manifest>(expired).expires_at;
    proxy.rewrite = (path, answer) =>
      path.endsWith('/manifest/') ? { ...answer, status: 200, body: Buffer.from(expired.text) } : answer;
    const run = await sync(dir);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      new RegExp(
        `^refused: the manifest expired at ${expiresAt.replace(/\./g, '\\.')} \\(now \\S+, 300 s of clock skew allowed\\): fetch a fresh one\n$`,
      ),
    );
    expect(snapshot(dir)).toEqual(before);
  });

  it('a sync killed half way leaves only whole files, none of them in the state; the next sync completes', async () => {
    const dir = await syncedDir();
    const stateBefore = readFileSync(join(dir, '.svc-plugins/state.json'), 'utf8');
    const listedBefore = snapshot(dir);
    await approved('Killed sync one');
    await approved('Killed sync two');
    const last = await approved('Killed sync three');
    proxy.expectStall();
    proxy.rewrite = (path, answer) => (path.endsWith(`/files/${sha256(last.source)}`) ? 'stall' : answer);
    const child = spawn('python3', [INSTALLER, 'sync', '--server', server, '--dir', dir], {
      env: { ...process.env, SVC_TOKEN: bob.token },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // The installer is reading the third file, the two before it written: killed there.
    expect(await proxy.stalled).toBe(`/api/v1/community-plugins/files/${sha256(last.source)}`);
    child.kill('SIGKILL');
    await exited;
    proxy.rewrite = null;

    expect(readFileSync(join(dir, '.svc-plugins/state.json'), 'utf8')).toBe(stateBefore);
    const after = snapshot(dir);
    // What the state lists is there as it was; every other plugin file is whole (its name's digest).
    for (const [name, digest] of Object.entries(listedBefore)) expect(after[name]).toBe(digest);
    for (const name of pluginFilesIn(dir)) expect(name).toContain(`_${after[name]}.py`);
    expect(pluginFilesIn(dir).some((name) => name.includes(sha256(last.source)))).toBe(false);

    const manifest = await manifestNow();
    const run = await sync(dir);
    expect(run.stdout).toMatch(
      new RegExp(
        `^(install .*\\n){3}apply serial ${manifest.serial}: 3 installed, 0 repaired, 0 removed, \\d+ unchanged\\n$`,
      ),
    );
    expect(pluginFilesIn(dir)).toEqual(manifest.plugins.map(fileOf).sort());
    expect(readdirSync(dir).filter((name) => name.startsWith('.svc-plugins-tmp-'))).toEqual([]);
  });
});
