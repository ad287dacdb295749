import path from 'node:path';
import type { ObservedEvent, ObservedKind } from './trace-observer';
import type { TestRunEvent } from './types';

/**
 * The plugin's testimony (its interpreter's audit events) held against what the kernel saw: an
 * observed action with no audit event that accounts for it is `server.testimony-missing`. Only
 * actions CPython audits are held against it: it raises no event for a dup2, so the testimony
 * cannot lack one.
 */

/** The audit events (CPython's names) that account for an observed action of each kind. */
const ACCOUNTS_FOR: Partial<Record<ObservedKind, ReadonlySet<string>>> = {
  open: new Set([
    'open',
    'os.listdir',
    'os.scandir',
    'glob.glob',
    'shutil.copyfile',
    'shutil.copytree',
    'shutil.rmtree',
    'shutil.move',
    'shutil.make_archive',
    'shutil.unpack_archive',
    'tempfile.mkstemp',
    'tempfile.mkdtemp',
    'sqlite3.connect',
    'ctypes.dlopen',
  ]),
  network: new Set(['socket.__new__', 'socket.connect', 'socket.bind', 'socket.sendto', 'socket.sendmsg']),
  execute: new Set(['os.exec', 'os.posix_spawn', 'os.spawn', 'os.system', 'subprocess.Popen', 'pty.spawn']),
  process: new Set([
    'os.fork',
    'os.forkpty',
    'os.posix_spawn',
    'os.spawn',
    'os.system',
    'subprocess.Popen',
    'pty.spawn',
  ]),
  'file-change': new Set([
    'os.chmod',
    'os.chown',
    'os.link',
    'os.mkdir',
    'os.remove',
    'os.rename',
    'os.rmdir',
    'os.symlink',
    'os.truncate',
    'os.utime',
    'os.setxattr',
    'os.removexattr',
    'shutil.chown',
    'shutil.copyfile',
    'shutil.copytree',
    'shutil.move',
    'shutil.rmtree',
    'tempfile.mkstemp',
    'tempfile.mkdtemp',
  ]),
  signal: new Set(['os.kill', 'os.killpg', 'signal.pthread_kill']),
};
/** Name lookups read the resolver's files themselves. */
const LOOKUPS = new Set([
  'socket.getaddrinfo',
  'socket.gethostbyname',
  'socket.gethostbyaddr',
  'socket.getnameinfo',
]);

function accounts(observed: ObservedEvent, testimony: TestRunEvent): boolean {
  if (observed.kind === 'open' && LOOKUPS.has(testimony.event))
    return observed.path?.startsWith('/etc/') ?? false;
  if (!ACCOUNTS_FOR[observed.kind]?.has(testimony.event)) return false;
  if (observed.path === undefined || (observed.kind !== 'open' && observed.kind !== 'file-change'))
    return true;
  // The testimony names a path as the plugin gave it (relative, through a descriptor): its last part must be there.
  const name = path.posix.basename(observed.path);
  return testimony.args.some((arg) => arg.includes(name));
}

export function testimonyMissing(observed: ObservedEvent[], testimony: TestRunEvent[]): TestRunEvent[] {
  const used = new Set<number>();
  const missing: TestRunEvent[] = [];
  for (const event of observed) {
    if (!event.flagged || ACCOUNTS_FOR[event.kind] === undefined) continue;
    const index = testimony.findIndex((candidate, at) => !used.has(at) && accounts(event, candidate));
    if (index >= 0) used.add(index);
    else
      missing.push({ event: 'server.testimony-missing', args: [event.event, ...event.args], flagged: true });
  }
  return missing;
}
