import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { JailSettings } from './types';

/** The runner and the self-check, beside this module (the build copies them next to the compiled file). */
export const PYTHON_DIR = path.join(__dirname, 'python');
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

/**
 * bwrap's command line: every namespace new (user, PID, network, IPC, UTS, cgroup), nothing
 * of the host but /usr read-only (the interpreter and its standard library), an empty tmpfs as
 * the working directory and as /tmp, no /etc, a clean environment, the jail's user not root.
 * `script` is the name of a file of PYTHON_DIR, whose bytes come in on SCRIPT_FD; the plugin,
 * when there is one, comes in on PLUGIN_FD.
 */
export function jailArguments(
  settings: JailSettings,
  script: string,
  scriptArgs: string[],
  withPlugin: boolean,
): string[] {
  const size = String(settings.limits.fileSizeBytes);
  return [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--uid',
    '65534',
    '--gid',
    '65534',
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
}
