/**
 * Timing of `generate/confirm_email` and of the request right after it, by the kind of address
 * (not part of `npm test`; speed is measured, never asserted). The production build runs as a
 * child process on SQLite (a temporary file), with its mail going to an SMTP sink on loopback
 * in a process of its own (so the sink's work is not the measuring client's). Each round sends,
 * in a random order, for an inactive account's address ("known"), an active account's
 * ("active") and a new address nobody registered ("unknown"):
 *
 *   POST /api/v1/generate/confirm_email/ {email}   then at once   the probe,
 *
 * then waits TIMING_SETTLE_MS for the work the request left behind (the outbox worker, SMTP).
 * The probe is `GET /api/v1/verify/confirm_email/<random key>` (one database read: `Invalid
 * Link`), or with TIMING_PROBE=live `GET /api/v1/health` (no database). Reported per class
 * against "unknown": the mean of the paired differences with its z (mean / standard error),
 * the median difference, and the Mann-Whitney U test's z (rank based, so a few slow outliers do
 * not decide it); for the probe and for the generate request itself. |z| < 2 is what chance
 * gives 95 % of the time.
 *
 * Traffic goes to 127.0.0.1 only, and the run is bounded: it stops sending after
 * TIMING_MAX_SECONDS and reports the rounds done.
 *
 *   TIMING_ROUNDS       default 250 (200..2000): rounds, one of each class per round
 *   TIMING_SETTLE_MS    default 25: the pause after each probe
 *   TIMING_PROBE        db (default) | live
 *   TIMING_PROBE_AFTER  response (default): the probe is sent once the generate answer is in;
 *                       sent: as the generate request goes out, on a second connection; or a
 *                       number of milliseconds after the answer (work that comes later, as
 *                       an SMTP conversation does)
 *   TIMING_MAIL         smtp (default) | stdout (no SMTP_HOST: the app prints each mail, here
 *                       into a file)
 *   TIMING_MAX_SECONDS  default 55 (10..60)
 *   TIMING_LOG_FILE     where the app's output goes (default: the temporary directory, removed)
 *
 * Run: npm run timing-pairs (builds first)
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT, RunningApp, startApp } from './lib/app-process';
import { registerCleanup, runScript, sleep, withTimeout } from './lib/cleanup';
import { intFromEnv } from './lib/env';
import { table } from './lib/stats';
import { DataSource } from 'typeorm';

const CLASSES = ['known', 'active', 'unknown'] as const;
type AddressClass = (typeof CLASSES)[number];
const PASSWORD = 'Timing!Passw0rd';
const WARMUP_ROUNDS = 20;

interface Member {
  generate: number;
  probe: number;
}

/** An SMTP server on loopback that accepts and discards every mail, in a process of its own. */
async function startSmtpSink(): Promise<{ port: number; stop: () => void }> {
  const code = `
    const { SMTPServer } = require('smtp-server');
    const server = new SMTPServer({
      authOptional: true, disableReverseLookup: true, disabledCommands: ['STARTTLS'], logger: false,
      onData(stream, _session, callback) { stream.resume(); stream.on('end', () => callback()); },
    });
    server.listen(0, '127.0.0.1', () => process.stdout.write(server.server.address().port + '\\n'));
    process.stdin.on('end', () => process.exit(0)).resume();
  `;
  const child: ChildProcess = spawn(process.execPath, ['-e', code], {
    cwd: PROJECT_ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // It stands in for a remote server: at the lowest priority its CPU does not compete with
  // the app and the measuring client for this machine's cores.
  if (child.pid !== undefined) setPriority(child.pid, 19);
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  registerCleanup('smtp sink', () => Promise.resolve(stop()), stop);
  const port = await withTimeout(
    new Promise<number>((resolve, reject) => {
      child.stdout!.setEncoding('utf8');
      child.stdout!.once('data', (line: string) => resolve(Number(line.trim())));
      child.once('exit', (exitCode) => reject(new Error(`smtp sink exited (${exitCode})`)));
    }),
    10_000,
    'smtp sink start',
  );
  return { port, stop };
}

/** The newest activation key in the app's SQLite file: the one just asked for, during set-up. */
async function newestActivationKey(databasePath: string): Promise<string> {
  const db = new DataSource({ type: 'better-sqlite3', database: databasePath, readonly: true });
  await db.initialize();
  try {
    for (let tries = 0; tries < 100; tries += 1) {
      const rows = (await db.query(
        'SELECT key_value AS "key" FROM email_confirmation ORDER BY id DESC LIMIT 1',
      )) as Array<{ key: string }>;
      if (rows.length > 0) return rows[0].key;
      await sleep(50);
    }
    throw new Error('no activation key within 5 s');
  } finally {
    await db.destroy();
  }
}

async function expectMessage(
  app: RunningApp,
  method: 'GET' | 'POST',
  path: string,
  body: Record<string, unknown> | undefined,
  message: string,
): Promise<number> {
  const result = await app.client.request(method, path, { body });
  const answer = (result.body as { message?: unknown } | null)?.message;
  if (result.status !== 200 || answer !== message) {
    throw new Error(`${method} ${path} answered ${result.status} ${JSON.stringify(result.body)}`);
  }
  return result.ms;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Paired differences: mean, its z (mean over standard error), median. */
function paired(a: number[], b: number[]): { mean: number; z: number; median: number } {
  const differences = a.map((value, index) => value - b[index]);
  const m = mean(differences);
  const variance = differences.reduce((sum, d) => sum + (d - m) ** 2, 0) / (differences.length - 1);
  return { mean: m, z: m / Math.sqrt(variance / differences.length), median: median(differences) };
}

/** Mann-Whitney U of a against b, as a z (normal approximation, ties corrected): > 0 when a is slower. */
function mannWhitneyZ(a: number[], b: number[]): number {
  const all = [...a.map((value) => ({ value, fromA: true })), ...b.map((value) => ({ value, fromA: false }))];
  all.sort((x, y) => x.value - y.value);
  let rankSumA = 0;
  let tieTerm = 0;
  for (let start = 0; start < all.length;) {
    let end = start;
    while (end + 1 < all.length && all[end + 1].value === all[start].value) end += 1;
    const rank = (start + end) / 2 + 1;
    for (let index = start; index <= end; index += 1) if (all[index].fromA) rankSumA += rank;
    const tied = end - start + 1;
    tieTerm += tied ** 3 - tied;
    start = end + 1;
  }
  const n1 = a.length;
  const n2 = b.length;
  const n = n1 + n2;
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const sd = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  return (u - (n1 * n2) / 2) / sd;
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

async function main(): Promise<number> {
  const rounds = intFromEnv('TIMING_ROUNDS', 250, 200, 2000);
  const settleMs = intFromEnv('TIMING_SETTLE_MS', 25, 0, 1000);
  const maxSeconds = intFromEnv('TIMING_MAX_SECONDS', 55, 10, 60);
  const probeKind = process.env.TIMING_PROBE ?? 'db';
  const mailKind = process.env.TIMING_MAIL ?? 'smtp';
  const probeAfter = process.env.TIMING_PROBE_AFTER ?? 'response';
  if (!/^(response|sent|\d{1,3})$/.test(probeAfter)) {
    throw new Error('TIMING_PROBE_AFTER must be response, sent or 0..999 (ms)');
  }
  if (!['db', 'live'].includes(probeKind)) throw new Error('TIMING_PROBE must be db or live');
  if (!['smtp', 'stdout'].includes(mailKind)) throw new Error('TIMING_MAIL must be smtp or stdout');

  const workDir = mkdtempSync(join(tmpdir(), 'svc-timing-'));
  registerCleanup(
    'work directory',
    () => Promise.resolve(rmSync(workDir, { recursive: true, force: true })),
    () => rmSync(workDir, { recursive: true, force: true }),
  );
  const databasePath = join(workDir, 'svc.sqlite');
  const env: Record<string, string> = {};
  if (mailKind === 'smtp') {
    const sink = await startSmtpSink();
    Object.assign(env, { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(sink.port) });
  }
  const app = await startApp({
    databaseUrl: `sqlite:${databasePath}`,
    pluginDir: join(workDir, 'community-plugins'),
    logFile: process.env.TIMING_LOG_FILE || join(workDir, 'app.log'),
    maxSockets: 2,
    env,
    outputToFile: true,
  });

  const addresses: Record<Exclude<AddressClass, 'unknown'>, string> = {
    known: 'known.timing@example.com',
    active: 'active.timing@example.com',
  };
  for (const [name, email] of Object.entries(addresses)) {
    await expectMessage(
      app,
      'POST',
      '/api/v1/register/',
      { username: `timing_${name}`, email, password: PASSWORD, confirm_password: PASSWORD },
      'User created successfully',
    );
  }
  await expectMessage(
    app,
    'POST',
    '/api/v1/generate/confirm_email/',
    { email: addresses.active },
    'Email send successful',
  );
  const key = await newestActivationKey(databasePath);
  await expectMessage(app, 'GET', `/api/v1/verify/confirm_email/${key}`, undefined, 'Email Verified');

  const probe = async (): Promise<number> =>
    probeKind === 'db'
      ? expectMessage(app, 'GET', `/api/v1/verify/confirm_email/${randomUUID()}`, undefined, 'Invalid Link')
      : (await app.client.get('/api/v1/health')).ms;
  const member = async (addressClass: AddressClass, round: number): Promise<Member> => {
    const email =
      addressClass === 'unknown'
        ? `nobody.${round}.${randomUUID().slice(0, 8)}@example.com`
        : addresses[addressClass];
    const generating = expectMessage(
      app,
      'POST',
      '/api/v1/generate/confirm_email/',
      { email },
      'Email send successful',
    );
    const probeMs =
      probeAfter === 'sent'
        ? await probe()
        : await generating.then(async () => {
            if (probeAfter !== 'response') await sleep(Number(probeAfter));
            return probe();
          });
    const generate = await generating;
    await sleep(settleMs);
    return { generate, probe: probeMs };
  };

  const loadBefore = load();
  const samples = new Map<AddressClass, Member[]>(CLASSES.map((name) => [name, []]));
  const deadline = performance.now() + maxSeconds * 1000;
  let done = 0;
  for (let round = -WARMUP_ROUNDS; round < rounds && performance.now() < deadline; round += 1) {
    const order = [...CLASSES];
    for (let index = order.length - 1; index > 0; index -= 1) {
      const other = Math.floor(Math.random() * (index + 1));
      [order[index], order[other]] = [order[other], order[index]];
    }
    const results = new Map<AddressClass, Member>();
    for (const addressClass of order) results.set(addressClass, await member(addressClass, round));
    if (round < 0) continue;
    for (const addressClass of CLASSES) samples.get(addressClass)!.push(results.get(addressClass)!);
    done += 1;
  }
  const loadAfter = load();
  await app.stop();

  const rows: string[][] = [];
  for (const measure of ['probe', 'generate'] as const) {
    const unknown = samples.get('unknown')!.map((sample) => sample[measure]);
    rows.push([measure, 'unknown', median(unknown).toFixed(3), '', '', '', '', '']);
    for (const addressClass of ['known', 'active'] as const) {
      const values = samples.get(addressClass)!.map((sample) => sample[measure]);
      const pair = paired(values, unknown);
      rows.push([
        measure,
        addressClass,
        median(values).toFixed(3),
        (pair.mean * 1000).toFixed(0),
        pair.z.toFixed(2),
        (pair.median * 1000).toFixed(0),
        mannWhitneyZ(values, unknown).toFixed(2),
        String(values.length),
      ]);
    }
  }
  const probeName =
    probeKind === 'db' ? 'GET /api/v1/verify/confirm_email/<random key>' : 'GET /api/v1/health';
  process.stdout.write(
    `SQLite; mail: ${mailKind === 'smtp' ? 'SMTP sink on loopback' : 'stdout'}; probe: ${probeName}; ` +
      `probe sent after: ${probeAfter === 'response' || probeAfter === 'sent' ? `the generate request was ${probeAfter === 'sent' ? 'sent' : 'answered'}` : `${probeAfter} ms past the answer`}; ` +
      `${done} rounds (after ${WARMUP_ROUNDS} warm-up), settle ${settleMs} ms\n` +
      `load average (1, 5, 15 min): ${loadBefore} before, ${loadAfter} after\n\n` +
      table(
        [
          'request',
          'address',
          'median ms',
          'mean diff µs',
          'paired z',
          'median diff µs',
          'Mann-Whitney z',
          'n',
        ],
        rows,
      ) +
      '\n',
  );
  return 0;
}

runScript(main);
