/**
 * Cluster test (`npm run cluster-test`; not part of `npm test`): the production build as two
 * API replicas behind HAProxy, on a MariaDB Galera cluster of three nodes of the script's own
 * (fresh data directories, free ports on 127.0.0.1; the shared server on 3306 is never
 * touched), with Redis (a database number of its own), an SMTP sink and one plugin directory
 * shared by both replicas. Every request goes through the balancer. Passes when:
 *   - both replicas, started at once on an empty database, start (the migrations ran once);
 *   - the account, workspace and marketplace flows work, whichever replica answers;
 *   - the races fired at once across the replicas (each on its own Galera node) hold: 50 OTP
 *     guesses with the right one last are all refused; 8 new-password requests with one OTP
 *     change the password once; two admins approving one plugin make one review; one user's
 *     two uploads of one name make one row; and none of them answers 500;
 *   - during CLUSTER_LOAD_MS of mixed load, with one replica killed (kill -9) and later one
 *     Galera node killed, every request is answered 2xx or 503 within the query deadline
 *     plus a margin, every acknowledged write is in the database with its file, and every
 *     mail was sent once.
 * HAProxy is installed from Debian's packages when missing.
 * It prints the figures: requests, statuses, the longest request during each fault, and the
 * throughput through the balancer with one replica and with two (noisy on a shared machine).
 *
 *   CLUSTER_LOAD_MS         default 60000
 *   CLUSTER_CONCURRENCY     default 12 connections during the load
 *   CLUSTER_REDIS_URL       default redis://127.0.0.1:6379/7
 *   CLUSTER_KEEP            set to keep the directory with the nodes' and replicas' logs
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activationMail, otpMail } from '../src/account/mail-templates';
import { CLAIM_MARKER } from '../src/community-plugins/files/plugin-directory-claim';
import { SmtpSink } from '../test/helpers/smtp-sink';
import { RunningApp, startApp } from './lib/app-process';
import { registerCleanup, runScript, sleep } from './lib/cleanup';
import { intFromEnv } from './lib/env';
import { GaleraCluster } from './lib/galera-cluster';
import { Balancer } from './lib/haproxy';
import { HttpClient, HttpResult, Multipart } from './lib/http-client';
import { histogram, ms, percentile } from './lib/stats';
import { printWriteReport, verifyWrites } from './lib/write-check';
import {
  benignPlugin,
  expectMessage,
  LoadUser,
  MailWatch,
  newRunId,
  OperationKind,
  Outcome,
  signUp as signUpThroughMail,
  Workload,
} from './lib/workload';

const DATABASE = 'svc_cluster';
const LOAD_MS = intFromEnv('CLUSTER_LOAD_MS', 60_000, 10_000, 600_000);
const CONCURRENCY = intFromEnv('CLUSTER_CONCURRENCY', 12, 1, 64);
const REDIS_URL = process.env.CLUSTER_REDIS_URL ?? 'redis://127.0.0.1:6379/7';
const QUERY_TIMEOUT_SECONDS = 5;
/** No answer may take longer: the query deadline, a retried conflict's pauses and a margin. */
const HANG_MS = QUERY_TIMEOUT_SECONDS * 1000 + 5_000;
const PACE_MS = 40;
const MAX_REQUESTS = 60_000;
const MIX: OperationKind[] = [
  'login',
  'session-create',
  'session-list',
  'target-create',
  'plugin-upload',
  'catalogue',
  'configuration',
  'plugins-mine',
];

const failures: string[] = [];
const check = (ok: boolean, what: string): void => {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
  if (!ok) failures.push(what);
};

type Body = { status?: string; message?: unknown; data?: unknown } | null;
const messageOf = (result: HttpResult): unknown => (result.body as Body)?.message;

runScript(async () => {
  const started = performance.now();
  Balancer.ensureInstalled();
  const baseDir = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
  registerCleanup(
    `directory ${baseDir}`,
    async () => {
      if (!process.env.CLUSTER_KEEP) rmSync(baseDir, { recursive: true, force: true });
      else process.stdout.write(`logs kept in ${baseDir}\n`);
    },
    () => undefined,
  );
  const pluginDir = join(baseDir, 'plugins');
  mkdirSync(pluginDir);

  process.stdout.write('starting three Galera nodes...\n');
  const cluster = await GaleraCluster.create(join(baseDir, 'galera'));
  registerCleanup(
    'galera cluster',
    () => cluster.stop(),
    () => undefined,
  );
  await cluster.start();
  const [node1, node2, node3] = cluster.nodes;
  await node1.query(undefined, `CREATE DATABASE ${DATABASE}`);
  process.stdout.write(
    `cluster of ${await cluster.clusterSize(node3)} up after ${ms(performance.now() - started)} ms\n`,
  );

  const smtp = new SmtpSink();
  await smtp.start();
  registerCleanup(
    'smtp sink',
    () => smtp.stop(),
    () => undefined,
  );

  // Each replica writes to its own node, through the balancer's TCP frontend, and falls back
  // to the others in turn: requests of two replicas race on two nodes, as in production.
  const nodeBackend = (node: typeof node1) => ({ name: `node${node.index}`, port: node.port });
  const balancer = await Balancer.create(join(baseDir), [
    { name: 'r1', primary: nodeBackend(node1), backups: [nodeBackend(node2), nodeBackend(node3)] },
    { name: 'r2', primary: nodeBackend(node2), backups: [nodeBackend(node3), nodeBackend(node1)] },
  ]);
  const databaseUrl = (route: string) =>
    `mysql://root@127.0.0.1:${balancer.databasePorts.get(route)}/${DATABASE}`;
  const replicaEnv = {
    // One secret for every replica: a token one replica signed is checked by another.
    JWT_SECRET: randomBytes(48).toString('base64url'),
    // One manifest key too: each replica's signed manifest verifies against one public key.
    PLUGIN_MANIFEST_KEY: generateKeyPairSync('ed25519')
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString(),
    // The balancer is on loopback: its X-Forwarded-For tells the clients apart.
    TRUSTED_PROXIES: '127.0.0.1',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(smtp.port),
    SVC_ADMIN_EMAILS: 'boss@example.com,chief@example.com',
    REDIS_URL,
    DATABASE_QUERY_TIMEOUT_SECONDS: String(QUERY_TIMEOUT_SECONDS),
    SHUTDOWN_DRAIN_SECONDS: '2',
  };
  const startReplica = (name: string) =>
    startApp({
      databaseUrl: databaseUrl(name),
      pluginDir,
      logFile: join(baseDir, `${name}.log`),
      logLevel: 'warn',
      maxSockets: 4,
      env: replicaEnv,
    });
  // The balancer first: the replicas reach the database through it. Their HTTP ports are
  // known once they run, so the pool starts with placeholders, set through the runtime API.
  await balancer.start([
    { name: 'r1', port: 1 },
    { name: 'r2', port: 1 },
  ]);
  const joinPool = (name: string, app: RunningApp) =>
    balancer.command(`set server replicas/${name} addr 127.0.0.1 port ${app.port}`);
  process.stdout.write('starting two replicas at once on the empty database...\n');
  const replicas: Record<string, RunningApp> = {};
  const [r1, r2] = await Promise.allSettled([startReplica('r1'), startReplica('r2')]);
  check(
    r1.status === 'fulfilled' && r2.status === 'fulfilled',
    `both replicas started together on an empty database${
      r1.status === 'rejected' ? `; r1: ${String(r1.reason)}` : ''
    }${r2.status === 'rejected' ? `; r2: ${String(r2.reason)}` : ''}`,
  );
  if (r1.status !== 'fulfilled' || r2.status !== 'fulfilled') return 1;
  replicas.r1 = r1.value;
  replicas.r2 = r2.value;
  const [migrations] = (await node3.query(DATABASE, 'SELECT COUNT(*) AS n FROM migrations')) as Array<{
    n: number;
  }>;
  const [distinct] = (await node3.query(
    DATABASE,
    'SELECT COUNT(DISTINCT name) AS n FROM migrations',
  )) as Array<{
    n: number;
  }>;
  check(Number(migrations.n) === Number(distinct.n), `each migration recorded once (${migrations.n})`);
  await joinPool('r1', replicas.r1);
  await joinPool('r2', replicas.r2);
  await balancer.waitForReplicas({ r1: 'UP', r2: 'UP' });
  const client = new HttpClient('127.0.0.1', balancer.port, 64, HANG_MS);
  registerCleanup(
    'client',
    async () => client.close(),
    () => undefined,
  );

  // ----- accounts, through the balancer -----
  const runId = newRunId();
  /** Sign-up's MailWatch over the SMTP sink: the next mail of its kind to the address. */
  const watchMail: MailWatch = (kind, email) => {
    const pattern = kind === 'activation' ? /email-verify\/([0-9a-f-]{36})/ : /\b(\d{6})\b/;
    const subject = (
      kind === 'activation' ? activationMail(email, { confirm: '', claim: '' }) : otpMail(email, '')
    ).subject;
    const mails = () => smtp.received.filter((m) => m.to.includes(email) && m.subject === subject);
    const count = mails().length + 1;
    return async () => {
      await smtp.until(
        () => mails().length >= count,
        () => `${mails().length} of ${count} ${kind} mail(s) to ${email} arrived`,
        20_000,
      );
      const code = pattern.exec(mails()[count - 1].text)?.[1];
      if (!code) throw new Error(`no ${kind} code in the mail to ${email}`);
      return code;
    };
  };
  const signUp = (username: string, email?: string) => signUpThroughMail(client, watchMail, username, email);
  /** A second OTP mailed to a signed-up user, for the races. */
  const freshOtp = async (email: string) => {
    const otp = watchMail('otp', email);
    expectMessage(
      'generate/otp',
      await client.post('/api/v1/generate/otp/', { body: { emailOrUsername: email } }),
      'Otp Send Successful',
    );
    return otp();
  };

  const statuses: number[] = [];
  const record = (result: HttpResult) => {
    statuses.push(result.status);
    return result;
  };

  process.stdout.write('flows through the balancer...\n');
  const alice = await signUp(`lt${runId}u0`);
  const boss = await signUp('boss', 'boss@example.com');
  const chief = await signUp('chief', 'chief@example.com');
  // Workspace: a session, a target joining it, the list read back (from either replica).
  const session = record(
    await client.post('/api/v1/sessions/', { token: alice.token, body: { name: 'audit' } }),
  );
  const target = record(
    await client.post('/api/v1/targets/', {
      token: alice.token,
      body: { target_url: 'http://127.0.0.1:9/flow' },
    }),
  );
  const sessions = record(await client.get('/api/v1/sessions/', { token: alice.token }));
  check(
    session.status === 201 && target.status === 201 && JSON.stringify(sessions.body).includes('"audit"'),
    `workspace flow: session ${session.status}, target ${target.status}, listed on the next request`,
  );
  // Marketplace: upload, approval by an admin, listed in the catalogue.
  const uploadPlugin = (token: string, name: string, tag: string) =>
    client.post('/api/v1/community-plugins/upload', {
      token,
      body: new Multipart()
        .field('name', name)
        .field('description', `Cluster test plugin ${tag}`)
        .field('group', 'web')
        .field('type', 'passive')
        .field('author', 'Cluster Test')
        .file('plugin_file', `cluster_${tag.replace(/\W/g, '_')}.py`, benignPlugin(tag)),
    });
  const uploaded = record(await uploadPlugin(alice.token, `Flow ${runId}`, 'flow'));
  const pluginId = (uploaded.body as { data?: { id?: number } } | null)?.data?.id;
  // An admin approves what they read: the source first (recorded in the database, so any replica knows).
  record(await client.get(`/api/v1/community-plugins/${pluginId}/source/`, { token: boss.token }));
  const approved = record(
    await client.post(`/api/v1/community-plugins/${pluginId}/approve/`, { token: boss.token }),
  );
  const catalogue = record(await client.get('/api/v1/community-plugins/', { token: alice.token }));
  check(
    uploaded.status === 201 &&
      approved.status === 200 &&
      JSON.stringify(catalogue.body).includes(`Flow ${runId}`),
    `marketplace flow: upload ${uploaded.status}, approval ${approved.status}, in the catalogue`,
  );

  // ----- races across the replicas -----
  process.stdout.write('races across the replicas...\n');
  const no500 = (answers: HttpResult[]) =>
    answers.every((answer) => answer.status !== 500 && answer.status !== 0);
  {
    const user = await signUp(`lt${runId}u1`);
    const otp = await freshOtp(user.email);
    const wrong = (i: number) => String((Number(otp) + i) % 1_000_000).padStart(6, '0');
    const guesses = Array.from({ length: 49 }, (_, i) => wrong(i + 1)).concat(otp);
    const answers = await Promise.all(
      guesses.map((guess, i) =>
        i % 2 === 0
          ? client.post('/api/v1/verify/otp/', { body: { emailOrUsername: user.email, otp: guess } })
          : client.post('/api/v1/new-password/', {
              body: { emailOrUsername: user.email, otp: guess, password: 'N3w!Passw0rd' },
            }),
      ),
    );
    answers.forEach(record);
    const accepted = answers.filter(
      (answer) => answer.status === 200 && (answer.body as Body)?.status === 'success',
    );
    check(
      accepted.length === 0 && no500(answers),
      `50 OTP guesses at once, the right one last: ${accepted.length} accepted; ${histogram(answers.map((a) => a.status))}`,
    );
  }
  {
    const user = await signUp(`lt${runId}u2`);
    const otp = await freshOtp(user.email);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        client.post('/api/v1/new-password/', {
          body: { emailOrUsername: user.email, otp, password: `N3w!Passw0rd${i}` },
        }),
      ),
    );
    answers.forEach(record);
    const changed = answers.filter((answer) => messageOf(answer) === 'Password Change Successful').length;
    check(
      changed === 1 && no500(answers),
      `8 new-password requests with one OTP: ${changed} change; ${histogram(answers.map((a) => a.status))}`,
    );
  }
  {
    let reviews = 0;
    const all: HttpResult[] = [];
    for (let round = 0; round < 5; round += 1) {
      const plugin = await uploadPlugin(alice.token, `Review ${runId} ${round}`, `review ${round}`);
      const id = (plugin.body as { data?: { id?: number } } | null)?.data?.id;
      for (const admin of [boss, chief]) {
        all.push(await client.get(`/api/v1/community-plugins/${id}/source/`, { token: admin.token }));
      }
      const answers = await Promise.all(
        [boss, chief].map((admin) =>
          client.post(`/api/v1/community-plugins/${id}/approve/`, { token: admin.token }),
        ),
      );
      all.push(...answers);
      const [row] = (await node3.query(
        DATABASE,
        'SELECT reviewed_by_user_id AS r FROM user_plugins WHERE id = ?',
        [id],
      )) as Array<{ r: number | null }>;
      if (answers.filter((answer) => answer.status === 200).length === 1 && row?.r !== null) reviews += 1;
    }
    all.forEach(record);
    check(
      reviews === 5 && no500(all),
      `two admins approving one plugin, 5 rounds: ${reviews} of 5 with one review; ${histogram(all.map((a) => a.status))}`,
    );
  }
  {
    let single = 0;
    const all: HttpResult[] = [];
    for (let round = 0; round < 5; round += 1) {
      const name = `Twin ${runId} ${round}`;
      const answers = await Promise.all(
        [1, 2].map((n) => uploadPlugin(alice.token, name, `twin ${round} ${n}`)),
      );
      all.push(...answers);
      const [row] = (await node3.query(DATABASE, 'SELECT COUNT(*) AS n FROM user_plugins WHERE name = ?', [
        name,
      ])) as Array<{ n: number }>;
      const statuses2 = answers.map((answer) => answer.status).sort();
      if (Number(row.n) === 1 && statuses2[0] === 201 && statuses2[1] === 409) single += 1;
    }
    all.forEach(record);
    check(
      single === 5 && no500(all),
      `one user's two uploads of one name, 5 rounds: ${single} of 5 with one row (201 + 409); ${histogram(all.map((a) => a.status))}`,
    );
  }

  // ----- throughput through the balancer: one replica, then two -----
  const users: LoadUser[] = [];
  for (let i = 3; i < 3 + CONCURRENCY; i += 1) users.push(await signUp(`lt${runId}u${i}`));
  const readLoad = async (seconds: number): Promise<number> => {
    const end = performance.now() + seconds * 1000;
    let done = 0;
    await Promise.all(
      users.map(async (user) => {
        while (performance.now() < end) {
          const result = await client.get('/api/v1/community-plugins/', { token: user.token });
          if (result.status === 200) done += 1;
        }
      }),
    );
    return done / seconds;
  };
  await balancer.command('disable server replicas/r2');
  const oneReplica = await readLoad(5);
  await balancer.command('enable server replicas/r2');
  await balancer.waitForReplicas({ r1: 'UP', r2: 'UP' });
  const twoReplicas = await readLoad(5);
  process.stdout.write(
    `throughput (catalogue, ${users.length} connections, 5 s each): one replica ${oneReplica.toFixed(0)} req/s, two ${twoReplicas.toFixed(0)} req/s\n`,
  );

  // ----- faults under load -----
  process.stdout.write(`${LOAD_MS / 1000} s of mixed load: kill -9 replica r2, later Galera node 1...\n`);
  const mailsBefore = smtp.received.length;
  const workload = new Workload(client, runId, performance.now(), HANG_MS);
  const outcomes: Outcome[] = [];
  const phases: Array<{ name: string; from: number; to: number }> = [];
  let stop = false;
  const workers = users.map(async (user, index) => {
    let n = index;
    while (!stop && outcomes.length < MAX_REQUESTS) {
      const kind = MIX[n % MIX.length];
      n += 1;
      const before = performance.now();
      outcomes.push(await workload.perform(kind, user));
      const pause = PACE_MS - (performance.now() - before);
      if (pause > 0) await sleep(pause);
    }
  });
  const killReplicaAt = LOAD_MS / 6;
  const restartReplicaAt = (LOAD_MS * 2) / 6;
  const killNodeAt = (LOAD_MS * 3) / 6;
  await sleep(killReplicaAt);
  process.kill(replicas.r2.pid, 'SIGKILL');
  const replicaKilled = workload.now();
  await replicas.r2.exited;
  await sleep(restartReplicaAt - killReplicaAt);
  // Back on its node, and in the pool once its readiness says so (the balancer's list names its old port).
  replicas.r2 = await startReplica('r2');
  await joinPool('r2', replicas.r2);
  await balancer.waitForReplicas({ r2: 'UP' });
  phases.push({
    name: 'replica r2 killed (kill -9) until back in the pool',
    from: replicaKilled,
    to: workload.now(),
  });
  await sleep(Math.max(0, killNodeAt - workload.now()));
  await node1.stop('SIGKILL');
  const nodeKilled = workload.now();
  await sleep(Math.max(0, LOAD_MS - workload.now()));
  stop = true;
  await Promise.all(workers);
  phases.push({
    name: 'Galera node 1 killed (kill -9), r1 moved to node 2',
    from: nodeKilled,
    to: workload.now(),
  });

  const bad = outcomes.filter(
    (outcome) => !(outcome.status >= 200 && outcome.status < 300) && outcome.status !== 503,
  );
  const longest = Math.max(...outcomes.map((outcome) => outcome.ms));
  process.stdout.write(
    `requests: ${outcomes.length}; statuses: ${histogram(outcomes.map((o) => o.status))}\n`,
  );
  for (const phase of phases) {
    const during = outcomes.filter((o) => o.endedAt >= phase.from && o.startedAt <= phase.to);
    process.stdout.write(
      `  ${phase.name} (${ms(phase.from / 1000)} s to ${ms(phase.to / 1000)} s): ${during.length} requests, ${histogram(during.map((o) => o.status))}, longest ${ms(
        Math.max(0, ...during.map((o) => o.ms)),
      )} ms, p99 ${ms(
        percentile(
          during.map((o) => o.ms),
          99,
        ),
      )} ms\n`,
    );
  }
  for (const outcome of bad.slice(0, 5)) {
    process.stdout.write(
      `  ${outcome.route}: ${outcome.status} ${outcome.error ?? JSON.stringify(outcome.body)} after ${ms(outcome.ms)} ms at ${ms(outcome.startedAt)} ms\n`,
    );
  }
  check(bad.length === 0, `every request answered 2xx or 503 (${bad.length} others)`);
  check(longest <= HANG_MS, `no request waited past ${HANG_MS} ms (longest ${ms(longest)} ms)`);

  // Every acknowledged write, read from a node that stayed up; the rows' files on the shared directory.
  const report = await verifyWrites(node3.url(DATABASE), runId, outcomes, pluginDir);
  printWriteReport(report);
  check(report.ok, 'no acknowledged write lost, rows and files together');

  // Each mail once: one per request that queued one (activations and OTPs), none twice.
  await sleep(3_000);
  const sent = new Map<string, number>();
  for (const mail of smtp.received) {
    const id = /^Message-ID:\s*(\S+)/im.exec(mail.raw)?.[1] ?? mail.raw;
    sent.set(id, (sent.get(id) ?? 0) + 1);
  }
  const twice = [...sent.values()].filter((count) => count > 1).length;
  const [queued] = (await node3.query(DATABASE, 'SELECT COUNT(*) AS n FROM outbox_jobs')) as Array<{
    n: number;
  }>;
  check(
    twice === 0 && Number(queued.n) === 0,
    `each mail sent once: ${smtp.received.length} mails (${smtp.received.length - mailsBefore} during the load), ${twice} twice, ${queued.n} left in the outbox`,
  );
  const leftover = readdirSync(pluginDir).filter((name) => name.startsWith('.') && name !== CLAIM_MARKER);
  check(leftover.length === 0, `no temporary file left in the shared plugin directory (${leftover.length})`);

  for (const replica of Object.values(replicas)) if (!replica.hasExited()) await replica.stop();
  await balancer.stop();
  await cluster.stop();
  process.stdout.write(
    `\ncluster test ${failures.length === 0 ? 'PASSED' : `FAILED (${failures.length})`} in ${ms(
      (performance.now() - started) / 1000,
    )} s\n`,
  );
  return failures.length === 0 ? 0 : 1;
});
