import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PluginTestRun } from '../src/plugin-test-runs/plugin-test-run.entity';
import { INTERRUPTED } from '../src/plugin-test-runs/plugin-test-runs.service';
import { expectFail, fail } from './helpers/envelopes';
import {
  benignPlugin,
  databaseUrlOf,
  type SignedInUser,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';
import { bwrapLack, bwrapPath, describeNeeding } from './helpers/prerequisites';
import { SmtpSink } from './helpers/smtp-sink';
import { runSvcAdmin } from './helpers/svc-admin';
import { bootApp, createTestApp, type TestApp, TEST_JWT_SECRET } from './helpers/test-app';

jest.setTimeout(120_000);

type Row = Record<string, unknown>;
const dataOf = <T = Row>(response: { body: unknown }) => (response.body as { data: T }).data;

const NO_BWRAP = '/nonexistent/bwrap';
const UNAVAILABLE =
  'Test-runs are unavailable: bubblewrap is not available at /nonexistent/bwrap (ENOENT): install it ' +
  '(apt-get install -y --no-install-recommends bubblewrap) or set PLUGIN_TEST_RUN_BWRAP; see docs/plugin-test-run.md';

/** Passes the validator, and runs until its CPU limit ends it. */
const COUNTER = Buffer.from(
  'DESCRIPTION = "Counts forever"\n\n\ndef run(PluginInfo):\n    count = 0\n    while True:\n        count += 1\n',
);
/** Passes the validator, and waits, using no CPU, until the wall-clock limit ends it. */
const SLEEPER = Buffer.from(
  'import asyncio\n\nDESCRIPTION = "Waits"\n\n\ndef run(PluginInfo):\n    asyncio.run(asyncio.sleep(600))\n',
);

/** An app whose admin is boss, with `alice`'s plugins uploaded: `[id, version]` of each. */
async function appWithPlugins(
  smtp: SmtpSink,
  env: Record<string, string>,
  files: Array<[string, Buffer]>,
): Promise<{ t: TestApp; alice: SignedInUser; boss: SignedInUser; plugins: number[] }> {
  const t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'boss@example.com', ...env } });
  const alice = await signUpAs(t, smtp, 'alice');
  const boss = await signUpAs(t, smtp, 'boss');
  const plugins: number[] = [];
  for (const [name, file] of files) {
    const response = await upload(t, alice.token, { fields: validFields(name), file });
    expect(response.status).toBe(201);
    plugins.push(dataOf<{ id: number }>(response).id);
  }
  return { t, alice, boss, plugins };
}

const testRunPath = (id: number | string, version: string) =>
  `/api/v1/community-plugins/${id}/versions/${version}/test-run/`;

describeNeeding(bwrapLack(), 'test-runs of a version in the jail (issue 31)', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let alice: SignedInUser;
  let boss: SignedInUser;
  let titles: number;
  let counter: number;
  let sleeper: number;

  const as = (user: SignedInUser) => ({
    get: (path: string) => t.http().get(path).set('Authorization', `Bearer ${user.token}`),
    post: (path: string) => t.http().post(path).set('Authorization', `Bearer ${user.token}`),
  });

  /** The newest report, once its run ended (the run is a child process: its end is awaited, not timed). */
  const finished = async (id: number): Promise<Row> => {
    for (;;) {
      const response = await as(boss).get(testRunPath(id, '1.0.0')).expect(200);
      const run = dataOf(response);
      if (!['queued', 'running'].includes(String(run.status))) return run;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  /** Every run ended. */
  const ended = async (): Promise<void> => {
    for (;;) {
      const [row] = (await t.dataSource.query(
        "SELECT COUNT(*) AS count FROM plugin_test_runs WHERE status IN ('queued', 'running')",
      )) as Row[];
      if (Number(row.count) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      alice,
      boss,
      plugins: [titles, counter, sleeper],
    } = await appWithPlugins(
      smtp,
      {
        PLUGIN_TEST_RUN_BWRAP: bwrapPath(),
        PLUGIN_TEST_RUN_CPU_SECONDS: '1',
        PLUGIN_TEST_RUN_CPU_PRIORITY: 'normal',
        // Above the CPU limit however busy the machine: the counter ends at its CPU limit.
        PLUGIN_TEST_RUN_WALL_SECONDS: '5',
        PLUGIN_TEST_RUN_QUEUE: '0',
      },
      [
        ['Title finder', benignPlugin()],
        ['Counter', COUNTER],
        ['Sleeper', SLEEPER],
      ],
    ));
  });

  afterAll(async () => {
    await t?.close();
    await smtp.stop();
  });

  it('202 with the run id; the report progresses to done; the run is an audit entry', async () => {
    const started = await as(boss).post(testRunPath(titles, '1.0.0')).expect(202);
    const { id } = dataOf<{ id: number }>(started);
    expect(started.body).toEqual({ status: 'success', data: { id, status: 'queued' } });
    const run = await finished(titles);
    expect(run).toMatchObject({
      id,
      plugin_id: titles,
      version: '1.0.0',
      status: 'done',
      limit: null,
      exception: null,
      return_value: '[]',
      stdout: '',
      requested_by_user_id: boss.id,
    });
    expect((run.events as Array<{ flagged: boolean }>).filter((event) => event.flagged)).toEqual([]);
    // The reviewer's diff names it beside the findings.
    const diff = await as(boss).get(`/api/v1/community-plugins/${titles}/versions/1.0.0/diff/`).expect(200);
    expect(dataOf(diff).test_run).toEqual({ id, status: 'done', flagged_events: 0 });
    const audit = await as(boss).get('/api/v1/audit/?action=test_run').expect(200);
    expect(dataOf<{ entries: Row[] }>(audit).entries).toEqual([
      expect.objectContaining({
        actor: 'user',
        actor_user_id: boss.id,
        action: 'test_run',
        subject: `plugin:${titles}`,
        details: { version: '1.0.0', sha256: run.sha256, run_id: id },
      }),
    ]);
  });

  it('a plugin that runs on ends at its CPU limit: timed-out, limit cpu', async () => {
    await as(boss).post(testRunPath(counter, '1.0.0')).expect(202);
    expect(await finished(counter)).toMatchObject({ status: 'timed-out', limit: 'cpu' });
  });

  it('one run per core: the requests past them, fired together, get 503 with Retry-After', async () => {
    const cores = availableParallelism();
    // Each run holds its core until the wall-clock limit, seconds after the last request is answered.
    const responses = await Promise.all(
      Array.from({ length: cores + 1 }, () => as(boss).post(testRunPath(sleeper, '1.0.0'))),
    );
    const refused = responses.filter((response) => response.status === 503);
    expect(responses.filter((response) => response.status === 202)).toHaveLength(cores);
    expect(refused).toHaveLength(1);
    expect(refused[0].body).toEqual(fail('Test-run queue is full'));
    expect(refused[0].headers['retry-after']).toBe('10');
    await ended();
    expect(await finished(sleeper)).toMatchObject({ status: 'timed-out', limit: 'wall' });
  });

  it('403 `Admin privileges required` for anyone but an admin, the uploader included', async () => {
    expectFail(await as(alice).post(testRunPath(titles, '1.0.0')), 403, 'Admin privileges required');
    expectFail(await as(alice).get(testRunPath(titles, '1.0.0')), 403, 'Admin privileges required');
  });

  it('404 for an unknown plugin, an unknown version, and a version never run', async () => {
    expectFail(await as(boss).post(testRunPath(999_999, '1.0.0')), 404, 'Plugin not found');
    expectFail(await as(boss).post(testRunPath(titles, '9.9.9')), 404, 'Version not found');
    expectFail(await as(boss).get(testRunPath(titles, '9.9.9')), 404, 'Version not found');
    const other = await upload(t, alice.token, {
      fields: validFields('Never run'),
      file: benignPlugin('Never run'),
    });
    const neverRun = dataOf<{ id: number }>(other).id;
    expectFail(await as(boss).get(testRunPath(neverRun, '1.0.0')), 404, 'This version has no test-run');
    const diff = await as(boss).get(`/api/v1/community-plugins/${neverRun}/versions/1.0.0/diff/`).expect(200);
    expect(dataOf(diff).test_run).toBeNull();
  });
});

describe('test-runs where bubblewrap cannot run', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let boss: SignedInUser;
  let plugin: number;

  beforeAll(async () => {
    await smtp.start();
    ({
      t,
      boss,
      plugins: [plugin],
    } = await appWithPlugins(smtp, { PLUGIN_TEST_RUN_BWRAP: NO_BWRAP }, [['Title finder', benignPlugin()]]));
  });

  afterAll(async () => {
    await t?.close();
    await smtp.stop();
  });

  it('503 with one line saying what is missing and how to enable it; nothing is recorded', async () => {
    await t
      .http()
      .post(testRunPath(plugin, '1.0.0'))
      .set('Authorization', `Bearer ${boss.token}`)
      .expect(503, fail(UNAVAILABLE));
    const [row] = (await t.dataSource.query('SELECT COUNT(*) AS count FROM plugin_test_runs')) as Row[];
    expect(Number(row.count)).toBe(0);
    // The rest of the marketplace is unchanged.
    await t
      .http()
      .get(`/api/v1/community-plugins/${plugin}/source/`)
      .set('Authorization', `Bearer ${boss.token}`)
      .expect(200);
  });
});

describe('svc-admin plugins test-run <file>', () => {
  let dir: string;
  const svcAdmin = (args: string[], env: Record<string, string> = {}) =>
    runSvcAdmin(
      args,
      { JWT_SECRET: TEST_JWT_SECRET, DATABASE_URL: `sqlite:${join(dir, 'svc.sqlite')}`, ...env },
      dir,
    );

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-test-run-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describeNeeding(bwrapLack(), 'with bubblewrap', () => {
    it('prints the report as JSON, exit 0: the spawn is named and flagged, and touched nothing on the host', async () => {
      const touched = join(dir, 'touched');
      const file = join(dir, 'spawner.py');
      writeFileSync(
        file,
        `import subprocess\n\n\ndef run(PluginInfo):\n    subprocess.run(["sh", "-c", "touch ${touched}"])\n`,
      );
      const result = await svcAdmin(['plugins', 'test-run', file], { PLUGIN_TEST_RUN_BWRAP: bwrapPath() });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      const report = JSON.parse(result.stdout) as { status: string; limit: string; events: Row[] };
      // One process per run: the spawn is refused, and the run ends there.
      expect({ status: report.status, limit: report.limit }).toEqual({
        status: 'failed',
        limit: 'processes',
      });
      expect(report.events).toContainEqual({
        event: 'subprocess.Popen',
        args: ["'sh'", `['sh', '-c', 'touch ${touched}']`, 'None', 'None'],
        flagged: true,
      });
      expect(existsSync(touched)).toBe(false);
    });
  });

  it('exit 1 with the one line when the jail cannot run here', async () => {
    const file = join(dir, 'plugin.py');
    writeFileSync(file, 'def run(PluginInfo):\n    return 1\n');
    expect(await svcAdmin(['plugins', 'test-run', file], { PLUGIN_TEST_RUN_BWRAP: NO_BWRAP })).toEqual({
      code: 1,
      stdout: '',
      stderr: `${UNAVAILABLE}\n`,
    });
  });
});

describe('test-runs a stopped server left queued or running (no jail needed)', () => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(() => smtp.start());
  afterAll(async () => {
    await t?.close();
    await smtp.stop();
  });

  it("are marked failed at the next start with the reason; a young running one, maybe another replica's, is left alone", async () => {
    const env = {
      PLUGIN_TEST_RUN_BWRAP: NO_BWRAP,
      PLUGIN_TEST_RUN_WALL_SECONDS: '30',
      PLUGIN_TEST_RUN_QUEUE: '2',
    };
    const started = await appWithPlugins(smtp, env, [
      ['stale-run', benignPlugin('Stale')],
      ['young-run', benignPlugin('Young')],
      ['stale-queued', benignPlugin('Queued')],
    ]);
    t = started.t;
    const { boss } = started;
    const [stale, young, queued] = started.plugins;
    // The longest a run lives on a live server here: (2 + 1) x 30 s + 60 s = 150 s.
    const now = Date.now();
    const row = (pluginId: number, status: 'queued' | 'running', ageMs: number) => ({
      pluginId,
      version: '1.0.0',
      sha256: '0'.repeat(64),
      status,
      requestedByUserId: boss.id,
      report: null,
      createdAt: new Date(now - ageMs),
      finishedAt: null,
    });
    await t.dataSource
      .getRepository(PluginTestRun)
      .save([
        row(stale, 'running', 155_000),
        row(young, 'running', 60_000),
        row(queued, 'queued', 3_600_000),
      ]);

    const databaseUrl = databaseUrlOf(t);
    const dataDir = dirname(t.config.communityPluginDir);
    await t.close();
    t = await bootApp({ databaseUrl, dataDir, smtp, env: { SVC_ADMIN_EMAILS: 'boss@example.com', ...env } });

    const view = async (id: number) =>
      dataOf(
        await t.http().get(testRunPath(id, '1.0.0')).set('Authorization', `Bearer ${boss.token}`).expect(200),
      );
    for (const id of [stale, queued]) {
      expect(await view(id)).toMatchObject({ status: 'failed', exception: INTERRUPTED, events: [] });
      expect((await view(id)).finished_at).not.toBeNull();
    }
    expect(await view(young)).toMatchObject({ status: 'running', exception: null, finished_at: null });
  });
});
