/**
 * `npm run bench`: the app against a bare node:http baseline and against the bcrypt limit,
 * the response time of generate/confirm_email for known and unknown addresses, then the
 * validator benchmark, then the catalogue at scale (bench/catalogue-scale.ts), then GET beside
 * reviewers' diffs (bench/diffs-beside.ts), then GET beside test-runs in the jail
 * (bench/test-runs-beside.ts). Prints; writes nothing into the repository.
 *
 * Environment (all optional):
 *   BENCH_DATABASE_URL  mysql://user:pass@host:3306/db: a database of its own; it is EMPTIED
 *                       first. Without it: SQLite in a temporary directory.
 *   BENCH_BCRYPT_COST   bcrypt cost of the app and of the limit (default 12, the app's default).
 *   BENCH_DURATION      seconds per measured run (default 6; logins run 10 s at least).
 *   BENCH_CONNECTIONS   concurrent connections of the GET and upload runs (default 10).
 *   BENCH_CATALOGUE_PLUGINS  approved plugins of the catalogue-at-scale part (default 100000).
 *   BENCH_CATALOGUE_SAMPLES  requests measured per catalogue-at-scale row (default 200).
 *   BENCH_METRICS       `on`: the app keeps and serves its metrics (METRICS_PORT); default
 *                       off, as the app's default.
 * Arguments: --json <file> also writes the figures as JSON; --skip-validator leaves the
 * validator benchmark out, --skip-catalogue-scale the catalogue at scale; --only upload or
 * --only login runs that part alone (the upload run; or the login run and GET sessions beside
 * 20 logins/s, app and baseline) and prints its rows, --only get the two GET rows; --only
 * catalogue runs the catalogue at scale alone, --only diffs and --only test-runs those parts,
 * --only polling the catalogue row and a polling install (bench/polling.ts); --skip-diffs and --skip-test-runs
 * leave them out.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyDatabase } from '../test/helpers/database';
import type { AppConfig } from '../src/config/app-config';
import { benchConfig, positiveInteger, progress, startApp } from './app-server';
import { startBaseline } from './baseline-server';
import { BcryptLimit, measureBcryptLimit } from './bcrypt-limit';
import { formatTiming, measureConfirmTiming } from './confirm-timing';
import { addUsage, NO_USAGE, runLoad, summarize } from './load';
import type { LoadResult, LoadSpec, RawLoad } from './load-spec';
import { BenchReport, ScenarioRow, scenarioTable, summaryLines } from './report';
import { BENCH_PASSWORD, login, seed } from './seed';
import { formatBenchTable, generatePlugin, runValidatorBench } from './validator.bench';
import { CatalogueScaleReport, formatCatalogueScale, measureCatalogueScale } from './catalogue-scale';
import { formatPolling, measurePolling } from './polling';
import { DiffsBesideReport, formatDiffsBeside, measureDiffsBeside } from './diffs-beside';
import {
  formatTestRunsBeside,
  measureTestRunsBeside,
  type TestRunsBesideReport,
  testRunsBesideSettings,
} from './test-runs-beside';

const SESSIONS_PER_USER = 10;
const APPROVED_PLUGINS = 200;
const UPLOAD_BYTES = 20 * 1024;
const LOGINS_BESIDE_PER_SECOND = 20;
const WARMUP_SECONDS = 2;
/** Alternating app/baseline rounds of the GET comparisons. */
const ROUNDS = 3;
const LOGIN_MIN_SECONDS = 10;

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  if (index < 0) return undefined;
  const value = process.argv[index + 1];
  if (!value || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}

async function main(): Promise<void> {
  const bcryptCost = positiveInteger('BENCH_BCRYPT_COST', 12);
  const duration = positiveInteger('BENCH_DURATION', 6);
  const connections = positiveInteger('BENCH_CONNECTIONS', 10);
  const jsonFile = argument('--json');
  const databaseUrl = process.env.BENCH_DATABASE_URL?.trim() || undefined;
  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  try {
    const config = benchConfig(workDir, databaseUrl, {
      BCRYPT_COST: String(bcryptCost),
      // One user uploads hundreds of plugins here; the cap is not what is measured.
      PLUGIN_MAX_PENDING_PER_USER: '1000000',
    });
    if (databaseUrl) await emptyDatabase(databaseUrl);
    const database =
      (config.database.type === 'sqlite'
        ? 'SQLite (better-sqlite3, temporary file)'
        : `MySQL/MariaDB ${config.database.host}:${config.database.port}/${config.database.database} (mysql2)`) +
      (config.metrics === null ? ', metrics off' : ', metrics on');

    progress(`measuring one bcrypt compare at cost ${bcryptCost}`);
    const bcrypt = await measureBcryptLimit(bcryptCost);
    const only = argument('--only');
    const catalogueScale = async (): Promise<CatalogueScaleReport> => {
      const scaleDir = join(workDir, 'catalogue-scale');
      if (databaseUrl) await emptyDatabase(databaseUrl);
      const scaleConfig = benchConfig(scaleDir, databaseUrl, { BCRYPT_COST: String(bcryptCost) });
      const scale = await measureCatalogueScale(scaleConfig, {
        plugins: positiveInteger('BENCH_CATALOGUE_PLUGINS', 100_000),
        bcryptCost,
        samples: positiveInteger('BENCH_CATALOGUE_SAMPLES', 200),
        startups: 3,
        progress,
      });
      console.log(`\n${formatCatalogueScale(scale)}`);
      return scale;
    };
    const diffsBeside = async (): Promise<DiffsBesideReport> => {
      const diffsDir = join(workDir, 'diffs-beside');
      if (databaseUrl) await emptyDatabase(databaseUrl);
      const diffsConfig = benchConfig(diffsDir, databaseUrl, { BCRYPT_COST: String(bcryptCost) });
      const diffs = await measureDiffsBeside(diffsConfig, { bcryptCost, progress });
      console.log(`\nGET beside reviewers' diffs\n${formatDiffsBeside(diffs)}`);
      return diffs;
    };
    const testRunsBeside = async (): Promise<TestRunsBesideReport> => {
      const runsDir = join(workDir, 'test-runs-beside');
      if (databaseUrl) await emptyDatabase(databaseUrl);
      const runsConfig = benchConfig(runsDir, databaseUrl, {
        BCRYPT_COST: String(bcryptCost),
        ...testRunsBesideSettings(),
      });
      const runs = await measureTestRunsBeside(runsConfig, { duration, connections, bcryptCost, progress });
      console.log(`\nGET beside test-runs in the jail\n${formatTestRunsBeside(runs)}`);
      return runs;
    };
    if (only === 'test-runs') {
      const runs = await testRunsBeside();
      if (jsonFile)
        writeFileSync(jsonFile, JSON.stringify({ database, testRunsBeside: runs }, null, 2) + '\n');
      return;
    }
    if (only === 'diffs') {
      const diffs = await diffsBeside();
      if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ database, diffsBeside: diffs }, null, 2) + '\n');
      return;
    }
    if (only === 'catalogue') {
      const scale = await catalogueScale();
      if (jsonFile)
        writeFileSync(jsonFile, JSON.stringify({ database, catalogueScale: scale }, null, 2) + '\n');
      return;
    }
    if (only !== undefined) {
      if (only !== 'upload' && only !== 'login' && only !== 'get' && only !== 'polling')
        throw new Error('--only takes upload, login, get, polling, catalogue, diffs or test-runs');
      await measureOnly(config, only, { database, duration, connections, bcrypt });
      return;
    }
    const report = await measure(config, { database, duration, connections, bcrypt });

    console.log(`\nsvc-api benchmark — ${report.database}`);
    console.log(
      `${report.machine.cpu}, ${report.machine.cores} cores, Node ${report.machine.node}; load average at start ` +
        `${report.machine.loadAverage.map((value) => value.toFixed(2)).join(' ')}; ${duration} s per run ` +
        `(logins ${Math.max(duration, LOGIN_MIN_SECONDS)} s), ${connections} connections, bcrypt cost ${bcryptCost}\n`,
    );
    console.log(
      scenarioTable(report, {
        sessions: '200',
        catalogue: '200',
        login: '200 success',
        upload: '201',
        sessionsUnderLogins: '200',
      }),
    );
    console.log(
      'ratio = req/s against the bare baseline; CPU us/req = CPU of this process (servers, bcrypt workers, GC; ' +
        'not the load generator) per answer; other procs CPU % = share of the machine used by other processes ' +
        'meanwhile (app / baseline)' +
        (config.database.type === 'mysql' ? ', the database server included' : '') +
        ': high values make every figure in the row unreliable.\n',
    );
    for (const line of summaryLines(report)) console.log(line);
    if (report.polling) console.log(`\n${formatPolling(report.polling)}`);

    progress('generate/confirm_email: known and unknown addresses, SMTP taking 100 ms a mail');
    const confirmTiming = await measureConfirmTiming();
    console.log('\naccount enumeration by timing (one request at a time, alternating)');
    console.log(formatTiming(confirmTiming));

    let validator = null;
    if (!process.argv.includes('--skip-validator')) {
      progress('validator benchmark');
      validator = await runValidatorBench();
      console.log("\nvalidator (through the server's worker pool, no HTTP)");
      console.log(formatBenchTable(validator));
    }
    const scale = process.argv.includes('--skip-catalogue-scale') ? null : await catalogueScale();
    const diffs = process.argv.includes('--skip-diffs') ? null : await diffsBeside();
    const testRuns = process.argv.includes('--skip-test-runs') ? null : await testRunsBeside();
    if (jsonFile) {
      writeFileSync(
        jsonFile,
        JSON.stringify(
          {
            ...report,
            confirmTiming,
            validator,
            catalogueScale: scale,
            diffsBeside: diffs,
            testRunsBeside: testRuns,
          },
          null,
          2,
        ) + '\n',
      );
    }

    const failed = Object.values(report.rows)
      .filter((row) => row.app.failures > 0 || (row.baseline?.failures ?? 0) > 0)
      .map((row) => row.name);
    if (report.loginsBeside.app.failures > 0 || (report.loginsBeside.baseline?.failures ?? 0) > 0) {
      failed.push(`the logins beside ${report.rows.sessionsUnderLogins.name}`);
    }
    if (failed.length > 0) {
      // Figures over wrong answers mean nothing: say so loudly, but print them all first.
      console.error(`\nUnexpected answers in: ${failed.join('; ')}`);
      process.exitCode = 1;
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

const UPLOAD_NAME = `POST /api/v1/community-plugins/upload (${UPLOAD_BYTES / 1024} KB)`;

/**
 * Valid plugins, every one expected 201: all from one uploader, who may have ten waiting for
 * the validator (src/plugin-validator/validator-pool.ts), so `connections` up to 12
 * are queued rather than told 503.
 */
async function measureUpload(
  origin: string,
  headers: Record<string, string>,
  connections: number,
  duration: number,
): Promise<LoadResult> {
  progress(`upload of a ${UPLOAD_BYTES / 1024} KB plugin, ${connections} connections: app`);
  const uploadLoad = await runLoad({
    // No warm-up run: seeding uploaded 200 plugins through the same route and threads, and a
    // warm-up cut off at its end leaves its uploads queued on the server (the client has gone,
    // the validation has not), where they would crowd the measured run's own uploads.
    warmup: 0,
    specs: [
      {
        title: 'app',
        origin,
        method: 'POST',
        path: '/api/v1/community-plugins/upload',
        headers,
        upload: { namePrefix: `bench-upload-${Date.now()}-`, source: generatePlugin(UPLOAD_BYTES) },
        connections,
        duration,
        expectStatus: 201,
        expectBodyIncludes: '"status":"success"',
      },
    ],
  });
  return summarize(uploadLoad.runs, uploadLoad);
}

/** The parts of measure() that `--only` runs alone. */
type Only = 'upload' | 'login' | 'get' | 'polling';

/** `--only`: one part of measure(), printed as rows of the same table. */
async function measureOnly(
  config: AppConfig,
  only: Only,
  options: { database: string; duration: number; connections: number; bcrypt: BcryptLimit },
): Promise<void> {
  const report = await measure(config, options, only);
  console.log(
    `\nsvc-api benchmark, ${only} only — ${report.database}; load average at start ${report.machine.loadAverage.map((value) => value.toFixed(2)).join(' ')}, at the end ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  const wanted: Array<keyof BenchReport['rows']> = {
    upload: ['upload' as const],
    login: ['login' as const, 'sessions' as const, 'sessionsUnderLogins' as const],
    get: ['sessions' as const, 'catalogue' as const],
    polling: ['catalogue' as const],
  }[only];
  const rows = Object.fromEntries(wanted.map((key) => [key, report.rows[key]]));
  console.log(
    scenarioTable(
      { ...report, rows: rows as BenchReport['rows'] },
      {
        sessions: '200',
        catalogue: '200',
        login: '200 success',
        upload: '201',
        sessionsUnderLogins: '200',
      },
    ),
  );
  if (only === 'login') for (const line of summaryLines(report).slice(0, 5)) console.log(line);
  if (report.polling) console.log(`\n${formatPolling(report.polling)}`);
  if (only === 'get')
    for (const line of summaryLines(report).filter((each) => each.startsWith('GET routes')))
      console.log(line);
  const failed = wanted.filter((key) => report.rows[key].app.failures > 0);
  if (failed.length > 0) {
    console.error(`\nUnexpected answers in: ${failed.map((key) => report.rows[key].name).join('; ')}`);
    process.exitCode = 1;
  }
}

const SKIPPED: LoadResult = {
  title: 'skipped',
  requestsPerSecond: NaN,
  p50: NaN,
  p90: NaN,
  p99: NaN,
  max: NaN,
  total: 0,
  duration: 0,
  statuses: {},
  failures: 0,
  cpuMsPerRequest: null,
  otherLoad: NaN,
};

async function measure(
  config: AppConfig,
  options: {
    database: string;
    duration: number;
    connections: number;
    bcrypt: BcryptLimit;
  },
  only?: Only,
): Promise<BenchReport> {
  const { duration, connections, bcrypt } = options;
  const loginDuration = Math.max(duration, LOGIN_MIN_SECONDS);
  const machine = {
    cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
    cores: availableParallelism(),
    node: process.versions.node,
    loadAverage: loadavg(),
  };

  progress('starting the app');
  const app = await startApp(config);
  await app.ready;
  try {
    progress(`seeding: 3 users, ${SESSIONS_PER_USER} sessions, ${APPROVED_PLUGINS} approved plugins`);
    const seeded = await seed(app.origin, app.dataSource, {
      sessions: SESSIONS_PER_USER,
      approvedPlugins: APPROVED_PLUGINS,
      bcryptCost: bcrypt.cost,
    });
    const baseline = await startBaseline(config);
    try {
      const auth = { authorization: `Bearer ${seeded.reader.token}` };
      const loginBody = JSON.stringify({ emailOrUsername: seeded.loginUser.email, password: BENCH_PASSWORD });
      const get = (title: string, origin: string, path: string): LoadSpec => ({
        title,
        origin,
        method: 'GET',
        path,
        headers: auth,
        connections,
        duration,
        expectStatus: 200,
        expectBodyIncludes: '"status":"success"',
      });
      const loginSpec = (title: string, origin: string, extra: Partial<LoadSpec>): LoadSpec => ({
        title,
        origin,
        method: 'POST',
        path: '/api/v1/login/',
        headers: { 'content-type': 'application/json' },
        body: loginBody,
        connections: 2 * bcrypt.cores + 2,
        duration: loginDuration,
        expectStatus: 200,
        expectBodyIncludes: '"jwt-token"',
        ...extra,
      });
      /** Waits for the bcrypt queue to empty: the pool is first in, first out. */
      const settle = (origin: string) => login(origin, seeded.loginUser.email);
      /**
       * The app and the baseline in alternating rounds, so a change in the machine's other
       * load (it is shared) falls on both alike; each warms up once before its first round.
       */
      const pair = async (
        name: string,
        make: (origin: string, who: string) => LoadSpec,
        rounds: number,
        afterEach?: (origin: string) => Promise<unknown>,
      ): Promise<ScenarioRow & { baseline: LoadResult }> => {
        progress(`${name}: app and bare baseline, ${rounds} round(s) each`);
        const runs = { app: [] as RawLoad[], baseline: [] as RawLoad[] };
        const usage = { app: NO_USAGE, baseline: NO_USAGE };
        for (let round = 0; round < rounds; round++) {
          for (const [who, origin] of [
            ['app', app.origin],
            ['baseline', baseline.origin],
          ] as const) {
            const spec = make(origin, who);
            if (round === 0) {
              // A warm-up run of its own, then what the server still holds of it is let finish:
              // the logins it left queued would otherwise be hashed inside the measured run,
              // for answers no one counts (7 % of a 10 s login run on 2 cores).
              await runLoad({ warmup: 0, specs: [{ ...spec, duration: WARMUP_SECONDS }] });
              await afterEach?.(origin);
            }
            const measured = await runLoad({
              warmup: 0,
              specs: [{ ...spec, duration: spec.duration / rounds }],
            });
            runs[who].push(...measured.runs);
            usage[who] = addUsage(usage[who], measured);
            await afterEach?.(origin);
          }
        }
        return {
          name,
          app: summarize(runs.app, usage.app),
          baseline: summarize(runs.baseline, usage.baseline),
        };
      };

      const sessionsPath = '/api/v1/sessions/';
      const skipped = (name: string) => ({ name, app: SKIPPED, baseline: SKIPPED });
      const sessions =
        only === 'upload' || only === 'polling'
          ? skipped('GET sessions')
          : await pair(
              `GET ${sessionsPath} (${SESSIONS_PER_USER} sessions)`,
              (origin, who) => get(who, origin, sessionsPath),
              ROUNDS,
            );
      const catalogue =
        only === 'upload' || only === 'login'
          ? skipped('GET catalogue')
          : await pair(
              `GET /api/v1/community-plugins/ (${APPROVED_PLUGINS} approved, limit 50)`,
              (origin, who) => get(who, origin, '/api/v1/community-plugins/'),
              ROUNDS,
            );
      // One round each: cutting a login run short leaves hashes queued that would slow the next.
      const loginRow =
        only === 'upload' || only === 'polling' || only === 'get'
          ? skipped('POST login')
          : await pair('POST /api/v1/login/', (origin, who) => loginSpec(who, origin, {}), 1, settle);

      /** GET while logins arrive at a fixed rate; the logins start first so the pool is busy. */
      const underLogins = async (origin: string, who: string): Promise<[LoadResult, LoadResult]> => {
        const measured = await runLoad({
          warmup: 0,
          specs: [
            { ...get(who, origin, sessionsPath), startDelay: 1 },
            loginSpec(`${who} logins`, origin, {
              duration: duration + 2,
              connections: LOGINS_BESIDE_PER_SECOND,
              overallRate: LOGINS_BESIDE_PER_SECOND,
            }),
          ],
        });
        await settle(origin);
        return [
          summarize([measured.runs[0]], measured, false),
          summarize([measured.runs[1]], measured, false),
        ];
      };
      const besideName = `GET ${sessionsPath} + ${LOGINS_BESIDE_PER_SECOND} logins/s`;
      const skipBeside = only === 'upload' || only === 'polling' || only === 'get';
      if (!skipBeside) progress(`${besideName}: app`);
      const [appBeside, appLogins] = skipBeside ? [SKIPPED, SKIPPED] : await underLogins(app.origin, 'app');
      if (!skipBeside) progress(`${besideName}: bare baseline`);
      const [baselineBeside, baselineLogins] = skipBeside
        ? [SKIPPED, SKIPPED]
        : await underLogins(baseline.origin, 'baseline');

      const polling =
        only === undefined || only === 'polling'
          ? await measurePolling(app.origin, auth, { connections, duration, progress })
          : undefined;
      const upload =
        only === 'login' || only === 'polling' || only === 'get'
          ? SKIPPED
          : await measureUpload(app.origin, auth, connections, duration);

      return {
        startedAt: new Date().toISOString(),
        machine,
        database: options.database,
        settings: {
          bcryptCost: bcrypt.cost,
          duration,
          connections,
          loginsBesideRate: LOGINS_BESIDE_PER_SECOND,
        },
        bcrypt,
        rows: {
          sessions,
          catalogue,
          login: loginRow,
          upload: { name: UPLOAD_NAME, app: upload },
          sessionsUnderLogins: { name: besideName, app: appBeside, baseline: baselineBeside },
        },
        loginsBeside: { app: appLogins, baseline: baselineLogins },
        polling,
        aims: {
          sessionsRatio: sessions.app.requestsPerSecond / sessions.baseline.requestsPerSecond,
          catalogueRatio: catalogue.app.requestsPerSecond / catalogue.baseline.requestsPerSecond,
          loginFractionOfLimit: loginRow.app.requestsPerSecond / bcrypt.loginsPerSecond,
          p99UnderLoginsOverIdle: appBeside.p99 / sessions.app.p99,
          baselineP99UnderLoginsOverIdle: baselineBeside.p99 / sessions.baseline.p99,
        },
      };
    } finally {
      await baseline.close();
    }
  } finally {
    await app.close();
  }
}

main().then(
  // The servers, the bcrypt workers and the load generators are all closed by now; should a
  // stray handle remain, it must not keep `npm run bench` from ending.
  () => setTimeout(() => process.exit(), 1000).unref(),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
