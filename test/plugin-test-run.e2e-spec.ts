import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PluginTestRun } from '../src/plugin-test-runs/plugin-test-run.entity';
import { INTERRUPTED } from '../src/plugin-test-runs/plugin-test-runs.service';
import { expectFail, fail } from './helpers/envelopes';
import {
  benignPlugin,
  databaseUrlOf,
  readThenApprove,
  type SignedInUser,
  signedIn,
  signUpAs,
  upload,
  validFields,
} from './helpers/marketplace';
import { activate, register, setPasswordByOtp, STRONG_PASSWORD } from './helpers/accounts';
import { bwrapLack, bwrapPath, describeNeeding } from './helpers/prerequisites';
import { SmtpSink } from './helpers/smtp-sink';
import { runSvcAdmin } from './helpers/svc-admin';
import { bootApp, createTestApp, type TestApp, TEST_JWT_SECRET } from './helpers/test-app';

jest.setTimeout(120_000);

type Row = Record<string, unknown>;
/** The events of a report flagged for the reviewer, of both lists, as the report itself shows them. */
const flagged = (run: Row): number =>
  [...(run.events as Row[]), ...(run.observed_events as Row[])].filter((event) => event.flagged).length;
const dataOf = <T = Row>(response: { body: unknown }) => (response.body as { data: T }).data;

const NO_BWRAP = '/nonexistent/bwrap';
const UNAVAILABLE =
  'Test-runs are unavailable: bubblewrap is not available at /nonexistent/bwrap (ENOENT): install it ' +
  '(apt-get install -y --no-install-recommends bubblewrap) or set PLUGIN_TEST_RUN_BWRAP; see docs/plugin-test-run.md';

/** Passes the validator, and runs until its CPU limit ends it. */
const COUNTER = Buffer.from(
  'DESCRIPTION = "Counts forever"\n\n\ndef run(PluginInfo):\n    count = 0\n    while True:\n        count += 1\n',
);
/**
 * Waits, using no CPU, until the wall-clock limit ends it. The plugin profile (issue 42) has no
 * way to wait without CPU (asyncio and time are outside it), so it is planted as an older
 * validator let it through: uploaded as a benign plugin, then its file and digests replaced.
 */
const SLEEPER = Buffer.from(
  'import asyncio\n\nDESCRIPTION = "Waits"\n\n\ndef run(PluginInfo):\n    asyncio.run(asyncio.sleep(600))\n',
);

/** The bytes of `plugin`'s only version replaced by `bytes`, its digests with them (what rules v8 approved). */
async function plant(t: TestApp, plugin: number, bytes: Buffer): Promise<void> {
  const [row] = (await t.dataSource.query('SELECT file_path FROM plugin_versions WHERE plugin_id = ?', [
    plugin,
  ])) as Array<{ file_path: string }>;
  writeFileSync(join(t.config.communityPluginDir, row.file_path), bytes);
  const digest = createHash('sha256').update(bytes).digest('hex');
  await t.dataSource.query('UPDATE plugin_versions SET sha256 = ? WHERE plugin_id = ?', [digest, plugin]);
  await t.dataSource.query('UPDATE user_plugins SET sha256 = ? WHERE id = ?', [digest, plugin]);
}

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
/** The version's runs (`runsPath(id, v)`), or one of them (`runsPath(id, v, runId)`). */
const runsPath = (id: number | string, version: string, runId?: number | string) =>
  `/api/v1/community-plugins/${id}/versions/${version}/test-runs/${runId ?? ''}`;
const diffPath = (id: number, version: string) => `/api/v1/community-plugins/${id}/versions/${version}/diff/`;

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
        // Far above the CPU limit: the counter ends at its CPU limit even on a machine twenty
        // processes keep busy (at normal priority a run gets its share of a core).
        PLUGIN_TEST_RUN_WALL_SECONDS: '20',
        PLUGIN_TEST_RUN_QUEUE: '0',
      },
      [
        ['Title finder', benignPlugin()],
        ['Counter', COUNTER],
        ['Sleeper', benignPlugin('Sleeper')],
      ],
    ));
    await plant(t, sleeper, SLEEPER);
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
    expect(dataOf(diff).test_runs).toEqual([
      {
        id,
        status: 'done',
        flagged_events: 0,
        requested_by_user_id: boss.id,
        requested_by_username: 'boss',
        created_at: run.created_at,
        finished_at: run.finished_at,
        limit: null,
      },
    ]);
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
    expectFail(await as(alice).get(runsPath(titles, '1.0.0')), 403, 'Admin privileges required');
    expectFail(await as(alice).get(runsPath(titles, '1.0.0', 1)), 403, 'Admin privileges required');
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
    expect(dataOf(diff)).toMatchObject({ test_run: null, test_runs: [] });
    expect(dataOf(await as(boss).get(runsPath(neverRun, '1.0.0')).expect(200))).toEqual({
      total: 0,
      limit: 50,
      offset: 0,
      runs: [],
    });
  });
});

const SELF_REVIEW = 'Admins cannot review their own plugins';
const TEST_RUN_NOT_FOUND = 'Test-run not found';
/** The members of a run in a list (the version's runs, the diff's `test_runs`): no report, no secret of the requester. */
const SUMMARY_KEYS = [
  'created_at',
  'finished_at',
  'flagged_events',
  'id',
  'limit',
  'requested_by_user_id',
  'requested_by_username',
  'status',
];

describeNeeding(bwrapLack(), "who runs a version's test-runs and reads them (issue 41)", () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  /** alice uploads; aliceAdmin is an admin at `Alice+x@Example.com`, alice's mailbox; chief, an admin, uploads too. */
  let alice: SignedInUser;
  let aliceAdmin: SignedInUser;
  let boss: SignedInUser;
  let chief: SignedInUser;

  const as = (user: SignedInUser) => ({
    get: (path: string) => t.http().get(path).set('Authorization', `Bearer ${user.token}`),
    post: (path: string) => t.http().post(path).set('Authorization', `Bearer ${user.token}`),
  });

  const uploadAs = async (user: SignedInUser, name: string): Promise<number> => {
    const response = await upload(t, user.token, { fields: validFields(name), file: benignPlugin(name) });
    expect(response.status).toBe(201);
    return dataOf<{ id: number }>(response).id;
  };

  /** A run by `user`, once it ended (its end is awaited, not timed). */
  const runAs = async (user: SignedInUser, plugin: number): Promise<Row> => {
    const { id } = dataOf<{ id: number }>(await as(user).post(testRunPath(plugin, '1.0.0')).expect(202));
    for (;;) {
      const run = dataOf(
        await as(boss)
          .get(runsPath(plugin, '1.0.0', id))
          .expect(200),
      );
      if (!['queued', 'running'].includes(String(run.status))) return run;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const rowsOf = async (plugin: number): Promise<number> => {
    const [row] = (await t.dataSource.query(
      'SELECT COUNT(*) AS count FROM plugin_test_runs WHERE plugin_id = ?',
      [plugin],
    )) as Row[];
    return Number(row.count);
  };

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({
      smtp,
      env: {
        SVC_ADMIN_EMAILS: 'boss@example.com,chief@example.com,alice+x@example.com',
        PLUGIN_TEST_RUN_BWRAP: bwrapPath(),
        PLUGIN_TEST_RUN_QUEUE: '1',
      },
    });
    alice = await signUpAs(t, smtp, 'alice');
    const tagged = { username: 'aliceAdmin', email: 'alice+x@example.com', password: STRONG_PASSWORD };
    await register(t, { ...tagged, email: 'Alice+x@Example.com' });
    await activate(t, smtp, tagged);
    await setPasswordByOtp(t, smtp, tagged);
    aliceAdmin = await signedIn(t, tagged);
    boss = await signUpAs(t, smtp, 'boss');
    chief = await signUpAs(t, smtp, 'chief');
  });

  afterAll(async () => {
    await t?.close();
    await smtp.stop();
  });

  it("403 `Admins cannot review their own plugins` to an admin at the uploader's mailbox, on the run and on each read; the 404s of the plugin and the version come first", async () => {
    const plugin = await uploadAs(alice, 'Tagged uploader');
    const run = await runAs(boss, plugin);
    expectFail(await as(aliceAdmin).post(testRunPath(plugin, '1.0.0')), 403, SELF_REVIEW);
    expectFail(await as(aliceAdmin).get(testRunPath(plugin, '1.0.0')), 403, SELF_REVIEW);
    expectFail(await as(aliceAdmin).get(runsPath(plugin, '1.0.0')), 403, SELF_REVIEW);
    expectFail(await as(aliceAdmin).get(runsPath(plugin, '1.0.0', Number(run.id))), 403, SELF_REVIEW);
    // Who may read is asked before which run: a run id names nothing to the uploader.
    expectFail(await as(aliceAdmin).get(runsPath(plugin, '1.0.0', 999_999)), 403, SELF_REVIEW);
    for (const path of [testRunPath(999_999, '1.0.0'), testRunPath(plugin, '9.9.9')]) {
      const message = path.includes('999999') ? 'Plugin not found' : 'Version not found';
      expectFail(await as(aliceAdmin).post(path), 404, message);
      expectFail(await as(aliceAdmin).get(path), 404, message);
    }
    expectFail(await as(aliceAdmin).get(runsPath(plugin, '9.9.9')), 404, 'Version not found');
    expectFail(await as(aliceAdmin).get(runsPath(999_999, '1.0.0', Number(run.id))), 404, 'Plugin not found');
    // The diff, which the uploader-admin may read, names none of the reviewers' runs to them.
    expect(dataOf(await as(aliceAdmin).get(diffPath(plugin, '1.0.0')).expect(200))).toMatchObject({
      test_run: null,
      test_runs: [],
    });
    expect(dataOf(await as(boss).get(diffPath(plugin, '1.0.0')).expect(200))).toMatchObject({
      test_run: { id: run.id },
    });
    // The refusals left no run behind: the reviewer's is the only one.
    expect(await rowsOf(plugin)).toBe(1);
    expect(dataOf<{ runs: Row[] }>(await as(boss).get(runsPath(plugin, '1.0.0')).expect(200)).runs).toEqual([
      expect.objectContaining({ id: run.id, requested_by_user_id: boss.id }),
    ]);
  });

  it('an admin who uploaded the plugin themself is refused likewise; another admin runs it', async () => {
    const plugin = await uploadAs(chief, 'Chief uploader');
    expectFail(await as(chief).post(testRunPath(plugin, '1.0.0')), 403, SELF_REVIEW);
    expectFail(await as(chief).get(runsPath(plugin, '1.0.0')), 403, SELF_REVIEW);
    const run = await runAs(boss, plugin);
    expectFail(await as(chief).get(testRunPath(plugin, '1.0.0')), 403, SELF_REVIEW);
    expectFail(await as(chief).get(runsPath(plugin, '1.0.0', Number(run.id))), 403, SELF_REVIEW);
    expect(dataOf(await as(boss).get(testRunPath(plugin, '1.0.0')).expect(200))).toEqual(run);
  });

  it("the uploader-admin's POSTs fired together are all 403, whatever room the queue has, and make no row and no audit entry", async () => {
    const plugin = await uploadAs(alice, 'Tagged together');
    // More than every core and the queue's one place: were the refusal after admission, some would be 503.
    const responses = await Promise.all(
      Array.from({ length: availableParallelism() + 4 }, () =>
        as(aliceAdmin).post(testRunPath(plugin, '1.0.0')),
      ),
    );
    expect(responses.map((response) => [response.status, response.body])).toEqual(
      responses.map(() => [403, fail(SELF_REVIEW)]),
    );
    expect(await rowsOf(plugin)).toBe(0);
    const audit = await as(boss).get(`/api/v1/audit/?action=test_run&subject=plugin:${plugin}`).expect(200);
    expect(dataOf<{ entries: Row[] }>(audit).entries).toEqual([]);
    // The queue gave back nothing it did not lend: a reviewer's run is admitted at once.
    await runAs(boss, plugin);
  });

  it("the diff names each reviewer's newest run: a second reviewer's run does not hide the first's", async () => {
    const plugin = await uploadAs(alice, 'Two reviewers');
    const first = await runAs(boss, plugin);
    const second = await runAs(chief, plugin);
    const mention = (run: Row) => ({ id: run.id, status: run.status, flagged_events: flagged(run) });
    const summary = (run: Row, user: SignedInUser) => ({
      ...mention(run),
      requested_by_user_id: user.id,
      requested_by_username: user.username,
      created_at: run.created_at,
      finished_at: run.finished_at,
      limit: run.limit,
    });
    let diff = dataOf(await as(boss).get(diffPath(plugin, '1.0.0')).expect(200));
    expect(diff.test_run).toEqual(mention(second));
    expect(diff.test_runs).toEqual([summary(second, chief), summary(first, boss)]);
    // boss runs it again: boss's newest replaces boss's older run, and chief's stays.
    const third = await runAs(boss, plugin);
    diff = dataOf(await as(chief).get(diffPath(plugin, '1.0.0')).expect(200));
    expect(diff.test_run).toEqual(mention(third));
    expect(diff.test_runs).toEqual([summary(third, boss), summary(second, chief)]);
    for (const entry of diff.test_runs as Row[]) expect(Object.keys(entry).sort()).toEqual(SUMMARY_KEYS);
  });

  it("lists a version's runs newest first, in pages, each with its requester and summary; one run reads whole by its id", async () => {
    const plugin = await uploadAs(alice, 'Listed');
    const runs = [await runAs(boss, plugin), await runAs(chief, plugin), await runAs(boss, plugin)];
    const requesters = [boss, chief, boss];
    const page = dataOf<{ total: number; limit: number; offset: number; runs: Row[] }>(
      await as(chief).get(runsPath(plugin, '1.0.0')).expect(200),
    );
    expect(page).toEqual({
      total: 3,
      limit: 50,
      offset: 0,
      runs: [2, 1, 0].map((index) => ({
        id: runs[index].id,
        status: runs[index].status,
        flagged_events: flagged(runs[index]),
        requested_by_user_id: requesters[index].id,
        requested_by_username: requesters[index].username,
        created_at: runs[index].created_at,
        finished_at: runs[index].finished_at,
        limit: runs[index].limit,
      })),
    });
    for (const entry of page.runs) expect(Object.keys(entry).sort()).toEqual(SUMMARY_KEYS);
    expect(
      dataOf<{ runs: Row[] }>(
        await as(chief)
          .get(`${runsPath(plugin, '1.0.0')}?limit=1&offset=1`)
          .expect(200),
      ),
    ).toEqual({ total: 3, limit: 1, offset: 1, runs: [page.runs[1]] });
    expect(
      (
        await as(chief)
          .get(`${runsPath(plugin, '1.0.0')}?limit=0&offset=-1`)
          .expect(400)
      ).body,
    ).toEqual(
      fail('Invalid query parameters', {
        limit: 'must be an integer of at least 1',
        offset: 'must be an integer of at least 0',
      }),
    );
    // One run by its id, in the shape of the newest; the newest by its id is the newest.
    for (const run of runs) {
      expect(
        dataOf(
          await as(chief)
            .get(runsPath(plugin, '1.0.0', Number(run.id)))
            .expect(200),
        ),
      ).toEqual(run);
    }
    expect(dataOf(await as(chief).get(testRunPath(plugin, '1.0.0')).expect(200))).toEqual(runs[2]);
  });

  it('404 `Test-run not found` for a run id of another version or plugin, of none, or spelled otherwise', async () => {
    const plugin = await uploadAs(alice, 'Not found runs');
    const other = await uploadAs(alice, 'Other plugin');
    const own = Number((await runAs(boss, plugin)).id);
    const elsewhere = Number((await runAs(boss, other)).id);
    await readThenApprove(t, boss.token, plugin).expect(200);
    await as(alice)
      .post(`/api/v1/community-plugins/${plugin}/versions/`)
      .field('version', '2.0.0')
      .attach('plugin_file', benignPlugin('Not found runs, 2'), {
        filename: 'plugin.py',
        contentType: 'text/x-python',
      })
      .expect(201);
    for (const runId of [elsewhere, 999_999, `0${own}`, '007', 'abc']) {
      expect([runId, (await as(boss).get(runsPath(plugin, '1.0.0', runId))).body]).toEqual([
        runId,
        fail(TEST_RUN_NOT_FOUND),
      ]);
    }
    // Its own version's run, asked of another version of the plugin.
    expectFail(await as(boss).get(runsPath(plugin, '2.0.0', own)), 404, TEST_RUN_NOT_FOUND);
    expect(dataOf(await as(boss).get(runsPath(plugin, '2.0.0')).expect(200))).toMatchObject({
      total: 0,
      runs: [],
    });
  });
});

describeNeeding(bwrapLack(), 'PLUGIN_SELF_REVIEW=allowed (issue 41)', () => {
  const smtp = new SmtpSink();
  let t: TestApp;

  beforeAll(() => smtp.start());
  afterAll(async () => {
    await t?.close();
    await smtp.stop();
  });

  it('lets a lone admin run their own upload and read its runs, as it lets them approve it', async () => {
    t = await createTestApp({
      smtp,
      env: {
        SVC_ADMIN_EMAILS: 'solo@example.com',
        PLUGIN_SELF_REVIEW: 'allowed',
        PLUGIN_TEST_RUN_BWRAP: bwrapPath(),
      },
    });
    const solo = await signUpAs(t, smtp, 'solo');
    const uploaded = await upload(t, solo.token, { fields: validFields('Solo'), file: benignPlugin('Solo') });
    const plugin = dataOf<{ id: number }>(uploaded).id;
    const call = (method: 'get' | 'post', path: string) =>
      t.http()[method](path).set('Authorization', `Bearer ${solo.token}`);
    const { id } = dataOf<{ id: number }>(await call('post', testRunPath(plugin, '1.0.0')).expect(202));
    expect(dataOf(await call('get', testRunPath(plugin, '1.0.0')).expect(200)).id).toBe(id);
    expect(dataOf(await call('get', runsPath(plugin, '1.0.0', id)).expect(200)).id).toBe(id);
    expect(dataOf<{ runs: Row[] }>(await call('get', runsPath(plugin, '1.0.0')).expect(200)).runs).toEqual([
      expect.objectContaining({ id, requested_by_user_id: solo.id, requested_by_username: 'solo' }),
    ]);
    expect(dataOf(await call('get', diffPath(plugin, '1.0.0')).expect(200)).test_runs).toEqual([
      expect.objectContaining({ id, requested_by_user_id: solo.id }),
    ]);
    for (;;) {
      const run = dataOf(await call('get', testRunPath(plugin, '1.0.0')).expect(200));
      if (!['queued', 'running'].includes(String(run.status))) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
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

  it('a run whose report a server without the summary columns wrote is summarised from its report', async () => {
    const event = (flagged: boolean) => ({ event: 'open', args: ["'x'"], flagged });
    const createdAt = new Date();
    const { id } = await t.dataSource.getRepository(PluginTestRun).save({
      pluginId: plugin,
      version: '1.0.0',
      sha256: '0'.repeat(64),
      status: 'timed-out',
      requestedByUserId: boss.id,
      report: JSON.stringify({
        limit: 'cpu',
        duration_ms: 1000,
        peak_memory_bytes: null,
        stdout: '',
        stderr: '',
        exception: null,
        return_value: null,
        events: [event(true), event(false), event(true)],
        events_dropped: 0,
        observed_events: [event(true)],
        observed_events_dropped: 0,
      }),
      flaggedEvents: null,
      endedByLimit: null,
      createdAt,
      finishedAt: createdAt,
    });
    const get = (path: string) => t.http().get(path).set('Authorization', `Bearer ${boss.token}`).expect(200);
    const summary = {
      id,
      status: 'timed-out',
      flagged_events: 3,
      requested_by_user_id: boss.id,
      requested_by_username: 'boss',
      created_at: createdAt.toISOString(),
      finished_at: createdAt.toISOString(),
      limit: 'cpu',
    };
    expect(dataOf<{ runs: Row[] }>(await get(runsPath(plugin, '1.0.0'))).runs).toEqual([summary]);
    const diff = dataOf(await get(diffPath(plugin, '1.0.0')));
    expect(diff).toMatchObject({
      test_run: { id, status: 'timed-out', flagged_events: 3 },
      test_runs: [summary],
    });
    expect(flagged(dataOf(await get(runsPath(plugin, '1.0.0', id))))).toBe(3);
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
    // The longest a run lives on a live server here (a paused run's wall clock waits up to one
    // limit more): (2 + 1) x 2 x 30 s + 60 s = 240 s.
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
        row(stale, 'running', 245_000),
        row(young, 'running', 150_000),
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
