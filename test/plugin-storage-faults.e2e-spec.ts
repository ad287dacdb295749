import { Logger } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fail } from './helpers/envelopes';
import { describeNeeding, type Lack } from './helpers/prerequisites';
import { benignPlugin, pluginState, signUpAs, upload, validFields } from './helpers/marketplace';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

/**
 * Real storage faults: a full tmpfs, a read-only bind mount, a path that is a file, and free
 * space below PLUGIN_DIR_MIN_FREE_BYTES. Mounting needs root (CI runs as root); where mount is
 * not permitted those tests are skipped, with one line saying why.
 */
const mountLack = ((): Lack | null => {
  const probe = mkdtempSync(join(tmpdir(), 'svc-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return null;
  } catch (error) {
    return {
      missing: `permission to mount (${(error as Error).message.split('\n')[0]})`,
      remedy: 'run the tests as root',
    };
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

const mount = (...args: string[]) => execFileSync('mount', args, { stdio: 'pipe' });

describe('community plugins: storage faults', () => {
  const smtp = new SmtpSink();
  let t: TestApp | undefined;
  const mounts: string[] = [];

  beforeAll(() => smtp.start());
  afterAll(() => smtp.stop());
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const point of mounts.splice(0).reverse()) execFileSync('umount', [point], { stdio: 'pipe' });
    jest.restoreAllMocks();
  });

  async function appWithPluginDir(directory: string, env: Record<string, string> = {}) {
    t = await createTestApp({ smtp, env: { COMMUNITY_PLUGIN_DIR: directory, ...env } });
    const user = await signUpAs(t, smtp, 'uploader');
    return { app: t, token: user.token };
  }

  async function readiness(app: TestApp) {
    const response = await app.http().get('/api/v1/health/ready');
    return { status: response.status, body: response.body as { errors?: Record<string, string> } };
  }

  describeNeeding(mountLack, 'storage faults on mounts', () => {
    it('answers 507 on a full disk, leaving no file and no row, and readiness is down until space is back', async () => {
      const directory = mkdtempSync(join(tmpdir(), 'svc-full-'));
      mount('-t', 'tmpfs', '-o', 'size=1m,mode=0750', 'tmpfs', directory);
      mounts.push(directory);
      const { app, token } = await appWithPluginDir(directory, { PLUGIN_DIR_MIN_FREE_BYTES: '262144' });
      expect((await readiness(app)).status).toBe(200);

      const filler = join(directory, 'filler.bin');
      const fd = openSync(filler, 'w');
      let stoppedBy: string | undefined;
      try {
        for (;;) writeSync(fd, Buffer.alloc(4096, 1));
      } catch (error) {
        stoppedBy = (error as NodeJS.ErrnoException).code;
      } finally {
        closeSync(fd);
      }
      expect(stoppedBy).toBe('ENOSPC');

      const before = await pluginState(app);
      const refused = await upload(app, token, {
        fields: validFields('Too big for the disk'),
        file: benignPlugin('full'),
      });
      expect([refused.status, refused.body]).toEqual([
        507,
        fail('Not enough storage space to save the plugin'),
      ]);
      expect(await pluginState(app)).toEqual(before);
      expect(readdirSync(directory).sort()).toEqual(['.svc-installation', 'filler.bin']);
      const down = await readiness(app);
      expect([down.status, down.body.errors?.plugin_directory]).toEqual([503, 'down']);

      unlinkSync(filler);
      expect((await readiness(app)).status).toBe(200);
      const stored = await upload(app, token, {
        fields: validFields('Fits now'),
        file: benignPlugin('fits'),
      });
      expect(stored.status).toBe(201);
    });

    it('answers 503 naming the cause when the directory is read-only; the log names the directory, the answer does not', async () => {
      const directory = mkdtempSync(join(tmpdir(), 'svc-readonly-'));
      mount('--bind', directory, directory);
      mounts.push(directory);
      mount('-o', 'remount,ro,bind', directory);
      const errors = jest.spyOn(Logger.prototype, 'error');
      const { app, token } = await appWithPluginDir(directory);

      const before = await pluginState(app);
      const refused = await upload(app, token, {
        fields: validFields('Read only'),
        file: benignPlugin('ro'),
      });
      expect([refused.status, refused.body]).toEqual([
        503,
        fail('Plugin storage is unavailable: read-only file system'),
      ]);
      expect(JSON.stringify(refused.body)).not.toContain(directory);
      expect(await pluginState(app)).toEqual(before);
      expect(errors).toHaveBeenCalledWith(
        expect.stringContaining(`Could not store a plugin file in ${directory}: EROFS`),
      );
      const down = await readiness(app);
      expect([down.status, down.body.errors?.plugin_directory]).toEqual([503, 'down']);
    });
  });

  it('answers 503 when the plugin directory is a file, and readiness is down', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'svc-notdir-'));
    const directory = join(parent, 'community-plugins');
    writeFileSync(directory, 'not a directory');
    const { app, token } = await appWithPluginDir(directory);

    const refused = await upload(app, token, {
      fields: validFields('Nowhere'),
      file: benignPlugin('nowhere'),
    });
    expect([refused.status, refused.body]).toEqual([
      503,
      fail('Plugin storage is unavailable: plugin directory is not a directory'),
    ]);
    const [row] = (await app.dataSource.query('SELECT COUNT(*) AS count FROM user_plugins')) as Array<{
      count: unknown;
    }>;
    expect(Number(row.count)).toBe(0);
    const down = await readiness(app);
    expect([down.status, down.body.errors?.plugin_directory]).toEqual([503, 'down']);
  });

  it('reports the plugin directory down when its free space is below PLUGIN_DIR_MIN_FREE_BYTES', async () => {
    const directory = join(mkdtempSync(join(tmpdir(), 'svc-space-')), 'community-plugins');
    mkdirSync(directory);
    const { app } = await appWithPluginDir(directory, {
      PLUGIN_DIR_MIN_FREE_BYTES: String(Number.MAX_SAFE_INTEGER),
    });
    const down = await readiness(app);
    expect([down.status, down.body.errors]).toEqual([
      503,
      { database: 'up', migrations: 'up', plugin_directory: 'down', shutdown: 'up', startup: 'up' },
    ]);
  });
});
