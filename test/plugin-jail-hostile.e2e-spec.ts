import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  benignPlugin,
  databaseUrlOf,
  type SignedInUser,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';
import { CHANNEL_FLOOD, lyingPlugins, showsExpected } from './helpers/lying-plugins';
import { bwrapLack, bwrapPath, describeNeeding } from './helpers/prerequisites';
import { SmtpSink } from './helpers/smtp-sink';
import { runSvcAdmin } from './helpers/svc-admin';
import { bootApp, createTestApp, type TestApp, TEST_JWT_SECRET } from './helpers/test-app';

jest.setTimeout(120_000);

type Row = Record<string, unknown>;
const dataOf = <T = Row>(response: { body: unknown }) => (response.body as { data: T }).data;
const sha = (content: Buffer) => createHash('sha256').update(content).digest('hex');
const testRunPath = (id: number) => `/api/v1/community-plugins/${id}/versions/1.0.0/test-run/`;

/**
 * Issue 41: what no version passing the validator can do, done by bytes an older validator let
 * through (the version's file and digest replaced while the app was stopped, as the re-check
 * test does): a plugin that floods the runner's channel, and one that patches the runner and
 * writes a file. Through the API the server keeps answering and the report says what the
 * kernel saw.
 */
describeNeeding(bwrapLack(), 'hostile bytes run through the API', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let boss: SignedInUser;
  let flood: number;
  /** The version of each lying plugin (test/fixtures/test-runs/lying), by fixture name. */
  const liars = new Map<string, number>();
  const lying = lyingPlugins();

  const get = (path: string) => t.http().get(path).set('Authorization', `Bearer ${boss.token}`);
  const finished = async (id: number): Promise<Row> => {
    for (;;) {
      const run = dataOf((await get(testRunPath(id)).expect(200)) as { body: unknown });
      if (!['queued', 'running'].includes(String(run.status))) return run;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    await smtp.start();
    const env = {
      SVC_ADMIN_EMAILS: 'boss@example.com',
      PLUGIN_TEST_RUN_BWRAP: bwrapPath(),
      // Every lying plugin's run admitted at once.
      PLUGIN_TEST_RUN_QUEUE: '32',
    };
    const first = await createTestApp({ smtp, env });
    // Two uploaders: one may have only ten plugins waiting for review.
    const uploaders = [await signUpAs(first, smtp, 'alice'), await signUpAs(first, smtp, 'carol')];
    const planted: Array<[string, Buffer]> = [
      ['flood', CHANNEL_FLOOD],
      ...lying.map((plugin) => [plugin.name, plugin.source] as [string, Buffer]),
    ];
    const ids = new Map<string, number>();
    for (const [index, [name]] of planted.entries()) {
      const response = await upload(first, uploaders[index % 2].token, {
        fields: validFields(`Planted ${String.fromCharCode(65 + index)}`),
        file: benignPlugin(name),
      });
      if (response.status !== 201) throw new Error(`upload of ${name}: ${response.status}`);
      ids.set(name, dataOf<{ id: number }>(response).id);
    }
    const url = databaseUrlOf(first);
    const pluginDir = first.config.communityPluginDir;
    const rows = (await first.dataSource.query('SELECT plugin_id, file_path FROM plugin_versions')) as Array<{
      plugin_id: number | string;
      file_path: string;
    }>;
    await first.close();
    for (const [name, bytes] of planted) {
      const row = rows.find((candidate) => Number(candidate.plugin_id) === ids.get(name))!;
      writeFileSync(join(pluginDir, row.file_path), bytes);
    }
    t = await bootApp({ databaseUrl: url, dataDir: dirname(pluginDir), smtp, env });
    for (const [name, bytes] of planted) {
      const id = ids.get(name)!;
      await t.dataSource.query('UPDATE user_plugins SET sha256 = ?, file_altered_at = NULL WHERE id = ?', [
        sha(bytes),
        id,
      ]);
      await t.dataSource.query('UPDATE plugin_versions SET sha256 = ? WHERE plugin_id = ?', [sha(bytes), id]);
      if (name === 'flood') flood = id;
      else liars.set(name, id);
    }
    boss = await signUpAs(t, smtp, 'boss');
  });

  afterAll(async () => {
    await t?.close();
    await smtp.stop();
  });

  it('a channel flood ends at limit output while the server goes on answering', async () => {
    await get(testRunPath(flood)).expect(404);
    await t.http().post(testRunPath(flood)).set('Authorization', `Bearer ${boss.token}`).expect(202);
    // Asked while the flood runs, and after it: the same answers.
    const during = await t.http().get('/api/v1/health');
    const run = await finished(flood);
    const after = await t.http().get('/api/v1/health');
    expect([during.status, after.status]).toEqual([200, 200]);
    expect({ status: run.status, limit: run.limit }).toEqual({ status: 'failed', limit: 'output' });
  });

  it('each plugin that made the old report lie is reported from outside, flagged, in its run and its diff', async () => {
    // Fired together: each run is queued behind the others and read when it ended.
    for (const id of liars.values()) {
      await t.http().post(testRunPath(id)).set('Authorization', `Bearer ${boss.token}`).expect(202);
    }
    for (const plugin of lying) {
      const id = liars.get(plugin.name)!;
      const run = await finished(id);
      const observed = run.observed_events as Array<{ event: string; args: string[]; flagged: boolean }>;
      expect({ name: plugin.name, shown: showsExpected(observed, plugin.expect) }).toEqual({
        name: plugin.name,
        shown: true,
      });
      // The diff's count of what a reviewer must look at includes what was seen from outside
      // (a plugin whose trick the runner no longer falls for may have done nothing at all).
      const diff = dataOf<{ test_run: { flagged_events: number } }>(
        await get(`/api/v1/community-plugins/${id}/versions/1.0.0/diff/`).expect(200),
      );
      const flagged = [...observed, ...(run.events as typeof observed)].filter((event) => event.flagged);
      expect(diff.test_run.flagged_events).toBe(flagged.length);
      expect(plugin.expect.ifRun || flagged.length > 0).toBe(true);
    }
  });
});

describeNeeding(bwrapLack(), 'svc-admin plugins test-run', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-inherited-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reports each plugin that made the old report lie from outside, flagged', async () => {
    for (const plugin of lyingPlugins()) {
      const result = await runSvcAdmin(['plugins', 'test-run', plugin.file], {
        JWT_SECRET: TEST_JWT_SECRET,
        DATABASE_URL: `sqlite:${join(dir, 'svc.sqlite')}`,
        PLUGIN_TEST_RUN_BWRAP: bwrapPath(),
      });
      expect({ name: plugin.name, code: result.code, stderr: result.stderr }).toEqual({
        name: plugin.name,
        code: 0,
        stderr: '',
      });
      const report = JSON.parse(result.stdout) as {
        observed_events: Array<{ event: string; args: string[]; flagged: boolean }>;
      };
      expect({ name: plugin.name, shown: showsExpected(report.observed_events, plugin.expect) }).toEqual({
        name: plugin.name,
        shown: true,
      });
    }
  });

  it('started with a descriptor it inherited, hands it to nothing in the jail: the plugin’s write to it fails and the host file is unchanged', async () => {
    const host = join(dir, 'host.log');
    writeFileSync(host, 'kept\n');
    const file = join(dir, 'plugin.py');
    writeFileSync(
      file,
      'import os\n\ndef run(PluginInfo):\n    try:\n        os.write(40, b"escaped\\n")\n' +
        '    except OSError as error:\n        return error.errno\n',
    );
    const root = join(__dirname, '..');
    // As a shell would start it: fd 40 open on the host file, not close-on-exec.
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        'bash',
        [
          '-c',
          'exec 40>>"$1"; exec "$2" "$3" plugins test-run "$4"',
          'bash',
          host,
          process.execPath,
          join(root, 'bin/svc-admin.js'),
          file,
        ],
        {
          cwd: dir,
          env: {
            PATH: process.env.PATH,
            JWT_SECRET: TEST_JWT_SECRET,
            DATABASE_URL: `sqlite:${join(dir, 'svc.sqlite')}`,
            PLUGIN_TEST_RUN_BWRAP: bwrapPath(),
          },
          timeout: 60_000,
        },
        (error, out) => (error ? reject(error) : resolve(out)),
      ),
    );
    const report = JSON.parse(stdout) as { status: string; return_value: string };
    expect(report).toMatchObject({ status: 'done', return_value: '9' }); // EBADF
    expect(readFileSync(host, 'utf8')).toBe('kept\n');
  });
});
