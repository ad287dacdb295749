import { randomBytes } from 'node:crypto';
import { access, constants, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { arch } from 'node:os';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CHRT } from './jail-command';
import { startJail } from './jail-process';
import { processFilter } from './process-filter';
import { TraceObserver } from './trace-observer';
import type { JailSettings } from './types';

/** Where the steps to enable the jail are written down. */
const HOW = 'see docs/plugin-test-run.md';
const CHECK_WALL_MS = 20_000;

const listening = (): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });

/** bwrap's complaint, as the one line the 503 carries. */
function bwrapProblem(settings: JailSettings, stderr: string): string {
  const first = stderr.split('\n').find((line) => line.trim() !== '') ?? 'no output';
  if (/namespace|uid map|setting up uid|Operation not permitted|Permission denied/i.test(first)) {
    return (
      `bubblewrap cannot create its namespaces here (${first.trim()}): enable unprivileged user ` +
      'namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0; in a container, a ' +
      `seccomp profile that allows them); ${HOW}`
    );
  }
  return `the jail did not start (${first.trim()}): check PLUGIN_TEST_RUN_PYTHON=${settings.pythonPath}; ${HOW}`;
}

const missing = (what: string, file: string, code: string, setting: string) =>
  `${what} is not available at ${file} (${code}): install it ` +
  `(apt-get install -y --no-install-recommends ${what}) or set ${setting}; ${HOW}`;

/** What keeps the jail from starting at all, before anything is run: the programs and the filter. */
async function startProblem(settings: JailSettings): Promise<string | null> {
  for (const [what, file, setting] of [
    ['bubblewrap', settings.bwrapPath, 'PLUGIN_TEST_RUN_BWRAP'],
    ['strace', settings.stracePath, 'PLUGIN_TEST_RUN_STRACE'],
    ...(settings.limits.cpuPriority === 'idle'
      ? [['util-linux', CHRT, 'PLUGIN_TEST_RUN_CPU_PRIORITY=normal']]
      : []),
  ]) {
    try {
      await access(file, constants.X_OK);
    } catch (error) {
      return missing(what, file, (error as NodeJS.ErrnoException).code ?? 'error', setting);
    }
  }
  if (processFilter() === null) {
    return `test-runs need an x86-64 machine: the jail's process filter has no table for ${arch()}; ${HOW}`;
  }
  return null;
}

/**
 * Proves the jail before it is offered: inside it, the host's loopback, a host file and the
 * parent's environment are out of reach, the limits apply and a second process is refused; and
 * the tracer outside saw the connect and the refusal. Resolves to null when all holds, else to
 * one line saying what is missing and how to enable it.
 */
export async function checkJail(settings: JailSettings): Promise<string | null> {
  const cannotStart = await startProblem(settings);
  if (cannotStart !== null) return cannotStart;
  const server = await listening();
  const hostDir = await mkdtemp(path.join(tmpdir(), 'jail-check-'));
  const hostFile = path.join(hostDir, randomBytes(12).toString('hex'));
  const canary = `SVC_JAIL_CANARY_${randomBytes(6).toString('hex').toUpperCase()}`;
  try {
    await writeFile(hostFile, 'host file\n');
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    let jail;
    try {
      jail = await startJail(settings, {
        script: 'self_check.py',
        scriptArgs: [JSON.stringify({ port, host_file: hostFile, canary })],
        stdin: '',
        // bwrap is given the canary; --clearenv must keep it out of the jail.
        env: { [canary]: 'visible' },
        wallMs: CHECK_WALL_MS,
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      return missing('strace', settings.stracePath, code, 'PLUGIN_TEST_RUN_STRACE');
    }
    jail.channel.resume();
    const observer = new TraceObserver(100);
    const traced = observer.read(jail.trace, jail.kill);
    const [ended] = await Promise.all([jail.ended, traced]);
    const observed = observer.result();
    const tracerComplaint = observed.anomalies.find((line) => line.startsWith('strace: '));
    if (tracerComplaint !== undefined) {
      return (
        `the tracer cannot follow the jail here (${tracerComplaint}): allow the server to trace its own ` +
        `children (ptrace; in a container, a seccomp profile that allows it); ${HOW}`
      );
    }
    const out = jail.stdout.text().trim().split('\n').pop() ?? '';
    let failed: unknown;
    try {
      failed = (JSON.parse(out) as { failed?: unknown }).failed;
    } catch {
      failed = undefined;
    }
    if (!Array.isArray(failed)) {
      if (ended.wallKilled)
        return `the jail's self-check did not end within ${CHECK_WALL_MS / 1000} s; ${HOW}`;
      return bwrapProblem(settings, jail.stderr.text());
    }
    if (failed.length > 0) return `the jail is not tight: ${failed.map(String).join(', ')}; ${HOW}`;
    const sawConnect = observed.events.some((event) => event.event === 'kernel.connect' && event.flagged);
    if (!observed.pluginStarted || !sawConnect || !observed.processDenied) {
      return `the tracer does not see what happens in the jail (no connect or refused process seen); ${HOW}`;
    }
    return null;
  } finally {
    server.close();
    await rm(hostDir, { recursive: true, force: true });
  }
}
