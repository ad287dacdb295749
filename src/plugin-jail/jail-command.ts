import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { TRACED_CALLS } from './trace-observer';
import type { JailSettings } from './types';

/** The runner and the self-check, beside this module (the build copies them next to the compiled file). */
export const PYTHON_DIR = path.join(__dirname, 'python');
/**
 * The tracer's output: strace's stderr. The launcher moves the jail's own stderr (the last
 * descriptor, jailStderrFdOf) over it before bwrap starts, so nothing in the jail holds the
 * tracer's pipe.
 */
export const TRACE_FD = 2;
/** The descriptor the runner writes its report to (it moves it to a random number before the plugin runs). */
export const CHANNEL_FD = 3;
/** The descriptor bwrap reads the plugin's bytes from: the jail sees exactly the bytes the caller checked. */
export const PLUGIN_FD = 4;
/**
 * The descriptor bwrap reads the runner's (or self-check's) bytes from: no path of the install
 * is bound, so the jail works wherever the server is installed, even where its user (nobody,
 * under a root server) cannot read the checkout.
 */
export const SCRIPT_FD = 5;
/** The first of the descriptors a script's companions (COMPANIONS) come in on, one each, in order. */
export const COMPANION_FD = 6;
/**
 * Files of PYTHON_DIR a script reads beside itself, bound read-only at /runner/<name> the same
 * way (by a pipe, no install path bound): the runner's stand-in for the framework's package.
 */
export const COMPANIONS: Readonly<Record<string, readonly string[]>> = {
  'runner.py': ['owtf_stand_in.py'],
};

/** The companions of a script, each with the descriptor it comes in on. */
export function companionsOf(script: string): { name: string; fd: number }[] {
  return (COMPANIONS[script] ?? []).map((name, index) => ({ name, fd: COMPANION_FD + index }));
}

/** After the companions: the process filter bwrap reads (`--seccomp`), then the jail's stderr, the last one kept. */
export function filterFdOf(script: string): number {
  return COMPANION_FD + companionsOf(script).length;
}
export function jailStderrFdOf(script: string): number {
  return filterFdOf(script) + 1;
}

/** The top-level names that are symlinks into /usr on a merged-/usr system, or directories on others. */
const ROOT_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** The host's /bin, /lib ... as the jail must show them: the same symlink, or the directory read-only. */
function rootLinks(): string[] {
  const args: string[] = [];
  for (const name of ROOT_LINKS) {
    let stat;
    try {
      stat = lstatSync(name);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(name), name);
    else if (stat.isDirectory()) args.push('--ro-bind', name, name);
  }
  return args;
}

/** After the jail's stderr: where the launcher writes the kernel's account of the jail (usageOf). */
export function usageFdOf(script: string): number {
  return jailStderrFdOf(script) + 1;
}

/**
 * Run by the host's interpreter, traced, before bwrap: the jail's stderr onto fd 2 (off the
 * tracer's pipe), every descriptor from there up closed but the usage one (a server started
 * under `exec 40>>file` would hand fd 40 down otherwise: neither strace nor bwrap closes what it
 * inherits), then bwrap as its child. When bwrap ends, the kernel's account of the whole jail
 * (wait4: the peak resident set of its largest process) goes to the usage
 * descriptor, which nothing in the jail holds, and the launcher ends as bwrap did.
 */
const LAUNCHER = [
  'import json, os, signal, sys',
  'stderr, usage = int(sys.argv[1]), int(sys.argv[2])',
  'os.dup2(stderr, 2)',
  'os.closerange(stderr, usage)',
  'os.closerange(usage + 1, os.sysconf("SC_OPEN_MAX"))',
  'pid = os.fork()',
  'if pid == 0:',
  '    os.close(usage)',
  '    os.execv(sys.argv[3], sys.argv[3:])',
  '_, status, rusage = os.wait4(pid, 0)',
  'os.write(usage, json.dumps({"max_rss_kib": rusage.ru_maxrss}).encode())',
  'os.close(usage)',
  'if os.WIFSIGNALED(status):',
  '    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)',
  '    os.kill(os.getpid(), os.WTERMSIG(status))',
  'os._exit(os.waitstatus_to_exitcode(status) & 255)',
].join('\n');

/**
 * strace around the whole jail, from outside its PID namespace (trace-observer.ts reads it):
 * every process and thread (`-f`), only the calls it judges (stopped in the kernel's filter,
 * `--seccomp-bpf`, so the others cost nothing), descriptors with their paths (`-y`), strings
 * escaped (`-x`), to its stderr. As root it starts the jail as `nobody`.
 */
export function tracerArguments(asRoot: boolean): string[] {
  return [
    '-f',
    '-q',
    '-y',
    '-x',
    '-s',
    '96',
    '--seccomp-bpf',
    '-e',
    `trace=${TRACED_CALLS.join(',')}`,
    ...(asRoot ? ['-u', 'nobody'] : []),
  ];
}

/** util-linux's chrt (essential on Debian): starts the tracer at the idle CPU priority. */
export const CHRT = '/usr/bin/chrt';

/**
 * The whole command: strace (under chrt at the idle priority), which runs the launcher, which
 * runs bwrap with the script. bwrap's
 * part: every namespace new (user, PID, network, IPC, UTS, cgroup), the interpreter as PID 1 (no
 * other process in the namespace to reach), the process filter (process-filter.ts), nothing of
 * the host but /usr read-only (the interpreter and its standard library), an empty sized tmpfs
 * as the working directory and as /tmp, the root and /dev read-only, no /etc, a clean
 * environment, the jail's user not root. `script` is the name of a file of PYTHON_DIR, whose
 * bytes come in on SCRIPT_FD; the plugin, when there is one, comes in on PLUGIN_FD.
 */
export function jailCommand(
  settings: JailSettings,
  script: string,
  scriptArgs: string[],
  withPlugin: boolean,
  asRoot: boolean,
): { file: string; args: string[] } {
  const size = String(settings.limits.fileSizeBytes);
  const bwrap = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--uid',
    '65534',
    '--gid',
    '65534',
    '--as-pid-1',
    '--hostname',
    'jail',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--setenv',
    'PATH',
    '/usr/bin:/bin',
    '--setenv',
    'LANG',
    'C.UTF-8',
    '--setenv',
    'HOME',
    '/work',
    '--ro-bind',
    '/usr',
    '/usr',
    ...rootLinks(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    size,
    '--tmpfs',
    '/tmp',
    '--size',
    size,
    '--tmpfs',
    '/work',
    '--perms',
    '0444',
    '--ro-bind-data',
    String(SCRIPT_FD),
    `/runner/${script}`,
    ...companionsOf(script).flatMap(({ name, fd }) => [
      '--perms',
      '0444',
      '--ro-bind-data',
      String(fd),
      `/runner/${name}`,
    ]),
    ...(withPlugin ? ['--perms', '0444', '--ro-bind-data', String(PLUGIN_FD), '/plugin/plugin.py'] : []),
    // The root (where /runner and /plugin are made) and /dev (with /dev/shm) are tmpfs without a
    // size: read-only, only /work and /tmp, sized, take writes.
    '--remount-ro',
    '/dev',
    '--remount-ro',
    '/',
    '--seccomp',
    String(filterFdOf(script)),
    '--chdir',
    '/work',
    '--',
    settings.pythonPath,
    // Isolated (no environment, no user site, no script directory on the path), no bytecode
    // written; the site module stays, so the libraries installed for the framework import.
    '-I',
    '-B',
    `/runner/${script}`,
    ...scriptArgs,
  ];
  const traced = [
    settings.stracePath,
    ...tracerArguments(asRoot),
    settings.pythonPath,
    '-I',
    '-S',
    '-c',
    LAUNCHER,
    String(jailStderrFdOf(script)),
    String(usageFdOf(script)),
    settings.bwrapPath,
    ...bwrap,
  ];
  // SCHED_IDLE for the tracer and all it starts: a run, and the tracing it costs, take only
  // the CPU the API leaves.
  if (settings.limits.cpuPriority === 'idle') return { file: CHRT, args: ['--idle', '0', ...traced] };
  return { file: traced[0], args: traced.slice(1) };
}
