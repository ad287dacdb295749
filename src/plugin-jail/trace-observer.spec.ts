import { PassThrough } from 'node:stream';
import { boundedLines } from './bounded-lines';
import { processFilter, TRAPPED_CALLS } from './process-filter';
import { testimonyMissing } from './testimony';
import { TraceObserver } from './trace-observer';
import { decodeEscaped, parseTraceLine } from './trace-syntax';

/** A trace as strace writes it: the launcher alone (no prefix), then bwrap outside (10) and the jail (11). */
const trace = (...plugin: string[]) => [
  'execve("/usr/bin/python3", ["/usr/bin/python3", "-I", "-S"], 0x7ffc /* 0 vars */) = 0',
  'clone(child_stack=NULL, flags=CLONE_NEWNS|CLONE_NEWUSER|CLONE_NEWPID|SIGCHLD) = 11',
  '[pid    10] openat(3</proc>, "11/ns", O_RDONLY|O_PATH) = 5</proc/11/ns>',
  '[pid    11] openat(AT_FDCWD</>, "/newroot/usr", O_RDONLY|O_CLOEXEC|O_PATH) = 4</newroot/usr>',
  '[pid    11] dup2(3, 77)                 = 77<pipe:[5]>',
  '[pid    11] openat(AT_FDCWD</work>, "/runner/plugin-starts", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)',
  ...plugin,
  '[pid    10] openat(AT_FDCWD</>, "/etc/outside-bwrap", O_WRONLY) = 5</etc/outside-bwrap>',
];

const observe = (lines: string[]) => {
  const refused: string[] = [];
  const observer = new TraceObserver(100, (call) => refused.push(call));
  for (const line of lines) observer.line(line);
  return { ...observer.result(), told: refused };
};
const flagged = (lines: string[]) =>
  observe(lines)
    .events.filter((event) => event.flagged)
    .map(({ event, args }) => [event, ...args]);

describe('strace lines', () => {
  it('reads a call, its arguments at their top-level commas and its result, whatever the strings hold', () => {
    expect(
      parseTraceLine(
        '[pid  7] openat(AT_FDCWD</work>, "a\\"), = 3", O_WRONLY|O_CREAT, 0666) = 3</work/a\\"), = 3>',
      ),
    ).toEqual({
      kind: 'call',
      pid: 7,
      name: 'openat',
      args: ['AT_FDCWD</work>', '"a\\"), = 3"', 'O_WRONLY|O_CREAT', '0666'],
      result: { value: 3, path: '/work/a"), = 3', error: null },
    });
    expect(
      parseTraceLine(
        '[pid 7] connect(3<socket:[9]>, {sa_family=AF_INET, sin_port=htons(80)}, 16) = -1 ENETUNREACH (Network is unreachable)',
      ),
    ).toMatchObject({
      args: ['3<socket:[9]>', '{sa_family=AF_INET, sin_port=htons(80)}', '16'],
      result: { value: -1, error: 'ENETUNREACH' },
    });
  });

  it('reads the other forms: unfinished, resumed, signals, ends, the tracer’s own words; nothing else', () => {
    expect(parseTraceLine('[pid 7] clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>')).toEqual({
      kind: 'unfinished',
      pid: 7,
      name: 'clone',
      text: 'child_stack=NULL, flags=SIGCHLD',
    });
    expect(parseTraceLine('[pid 7] <... clone resumed>) = 8')).toMatchObject({
      kind: 'resumed',
      name: 'clone',
    });
    expect(parseTraceLine('[pid 7] --- SIGSYS {si_signo=SIGSYS, si_code=SYS_SECCOMP} ---')).toMatchObject({
      kind: 'signal',
      signal: 'SIGSYS',
    });
    expect(parseTraceLine('[pid 7] +++ killed by SIGKILL +++')).toEqual({
      kind: 'exit',
      pid: 7,
      code: null,
      signal: 'SIGKILL',
    });
    expect(parseTraceLine('+++ exited with 0 +++')).toEqual({ kind: 'exit', pid: 0, code: 0, signal: null });
    expect(parseTraceLine('strace: ptrace(PTRACE_SEIZE, 7): Operation not permitted')).toMatchObject({
      kind: 'tracer',
    });
    expect(parseTraceLine('[pid 7] openat(AT_FDCWD, "x"')).toBeNull();
    expect(parseTraceLine('garbage')).toBeNull();
  });

  it('decodes strace’s escapes back to the bytes', () => {
    expect(decodeEscaped('a\\76b\\nc\\"d\\x2f\\xc3\\xa9\\\\')).toBe('a>b\nc"d/é\\');
  });
});

describe('the observer', () => {
  it('judges nothing before the plugin starts, and nothing of bwrap outside the jail', () => {
    expect(observe(trace())).toMatchObject({ events: [], pluginStarted: true, anomalies: [] });
    expect(observe(trace().slice(0, 4)).pluginStarted).toBe(false);
  });

  it('flags opens by where the kernel says they landed: a descriptor’s directory and .. do not hide them', () => {
    expect(
      flagged(
        trace(
          '[pid 11] openat(3</>, "tmp/evil.py", O_WRONLY|O_CREAT|O_CLOEXEC, 0777) = 4</tmp/evil.py>',
          '[pid 11] openat(AT_FDCWD</work>, "../etc/x", O_RDONLY) = -1 ENOENT (No such file or directory)',
          '[pid 11] openat(AT_FDCWD</work>, "ok.txt", O_WRONLY|O_CREAT, 0666) = 4</work/ok.txt>',
          '[pid 11] openat(AT_FDCWD</work>, "lib.py", O_WRONLY|O_CREAT, 0666) = 4</work/lib.py>',
          '[pid 11] openat(AT_FDCWD</work>, "/usr/lib/python3.11/json/__init__.py", O_RDONLY|O_CLOEXEC) = 4</usr/lib/python3.11/json/__init__.py>',
          '[pid 11] openat(AT_FDCWD</work>, "/etc/localtime", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)',
          '[pid 11] open("/dev/null", O_WRONLY) = 4</dev/null>',
        ),
      ),
    ).toEqual([
      ['kernel.openat', '/tmp/evil.py', 'O_WRONLY|O_CREAT|O_CLOEXEC', '= 4 </tmp/evil.py>'],
      ['kernel.openat', '/etc/x', 'O_RDONLY', '= -1 ENOENT'],
      ['kernel.openat', '/work/lib.py', 'O_WRONLY|O_CREAT', '= 4 </work/lib.py>'],
    ]);
  });

  it('flags network, programs, descriptor tricks, signals and limits; a thread is noted, not flagged', () => {
    const events = observe(
      trace(
        '[pid 11] socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_TCP) = 4<socket:[1]>',
        '[pid 11] connect(4<socket:[1]>, {sa_family=AF_INET, sin_port=htons(80)}, 16) = -1 ENETUNREACH (Network is unreachable)',
        '[pid 11] clone(child_stack=0x7f, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM) = 12',
        '[pid 12] dup2(4<socket:[1]>, 77) = 77<socket:[1]>',
        '[pid 12] fcntl(4<socket:[1]>, F_GETFD) = 1 (flags FD_CLOEXEC)',
        '[pid 11] kill(1, SIGTERM) = 0',
        '[pid 11] prlimit64(0, RLIMIT_NOFILE, NULL, {rlim_cur=1024, rlim_max=1024}) = 0',
        '[pid 11] execve("/usr/bin/sh", ["sh", "-c", "id"], 0x55 /* 3 vars */) = 0',
        '[pid 11] +++ exited with 3 +++',
      ),
    ).events.map(({ event, flagged: isFlagged }) => [event, isFlagged]);
    expect(events).toEqual([
      ['kernel.socket', true],
      ['kernel.connect', true],
      ['kernel.clone', false],
      ['kernel.dup2', true],
      ['kernel.kill', true],
      ['kernel.execve', true],
      ['kernel.exit', false],
    ]);
    expect(observe(trace('[pid 11] +++ exited with 3 +++')).pluginEnd).toBe('exited with 3');
  });

  it('leaves out the server’s pause (a stop and continue from outside the namespace), not the plugin’s own', () => {
    const observed = observe(
      trace(
        '[pid 11] --- SIGSTOP {si_signo=SIGSTOP, si_code=SI_USER, si_pid=0, si_uid=0} ---',
        '[pid 11] --- stopped by SIGSTOP ---',
        '[pid 11] --- SIGCONT {si_signo=SIGCONT, si_code=SI_USER, si_pid=0, si_uid=0} ---',
        '[pid 11] rt_sigqueueinfo(1, SIGSTOP, {si_signo=SIGSTOP, si_code=SI_USER, si_pid=0, si_uid=0}) = 0',
        '[pid 11] --- SIGSTOP {si_signo=SIGSTOP, si_code=SI_USER, si_pid=0, si_uid=0} ---',
        '[pid 11] kill(1, SIGSTOP) = 0',
        '[pid 11] --- SIGSTOP {si_signo=SIGSTOP, si_code=SI_USER, si_pid=1, si_uid=65534} ---',
        '[pid 11] --- stopped by SIGSTOP ---',
      ),
    );
    expect(observed.anomalies).toEqual([]);
    // A plugin can forge the server's siginfo for itself, but not without a call that is flagged.
    expect(observed.events.map(({ event, flagged: isFlagged }) => [event, isFlagged])).toEqual([
      ['kernel.rt_sigqueueinfo', true],
      ['kernel.kill', true],
      ['kernel.signal', false],
    ]);
  });

  it('flags file changes outside the working directory, followed through chdir, and a symlink pointing out', () => {
    expect(
      flagged(
        trace(
          '[pid 11] unlink("x") = 0',
          '[pid 11] mkdir("/work/d", 0777) = 0',
          '[pid 11] symlink("/", "/work/root") = 0',
          '[pid 11] chdir("/tmp") = 0',
          '[pid 11] rename("a", "/work/b") = 0',
          '[pid 11] unlinkat(4</usr/lib>, "y", 0) = -1 EROFS (Read-only file system)',
        ),
      ).map((event) => event[0]),
    ).toEqual(['kernel.symlink', 'kernel.rename', 'kernel.unlinkat']);
  });

  it('joins a call another process’s line cut in two', () => {
    expect(
      flagged(
        trace(
          '[pid 11] openat(AT_FDCWD</work>, "/etc/passwd", O_RDONLY <unfinished ...>',
          '[pid 12] clone(child_stack=0x7f, flags=CLONE_THREAD) = 13',
          '[pid 11] <... openat resumed>) = -1 ENOENT (No such file or directory)',
        ),
      ),
    ).toEqual([['kernel.openat', '/etc/passwd', 'O_RDONLY', '= -1 ENOENT']]);
  });

  it('names a call the filter refused, says a process was refused, and tells its caller once', () => {
    const sigsys = (call: string) =>
      `[pid 11] --- SIGSYS {si_signo=SIGSYS, si_code=SYS_SECCOMP, si_call_addr=0x7f, si_syscall=__NR_${call}, si_arch=AUDIT_ARCH_X86_64} ---`;
    const result = observe(trace(sigsys('vfork'), sigsys('ptrace')));
    expect(result.processDenied).toBe(true);
    expect(result.refused).toBe('vfork');
    expect(result.told).toEqual(['vfork']);
    expect(result.events.map((event) => event.args[0])).toEqual(['vfork', 'ptrace']);
    expect(observe(trace(sigsys('ptrace'))).processDenied).toBe(false);
  });

  it('keeps a line it cannot read, and the tracer’s complaints, as anomalies', () => {
    expect(observe(trace('[pid 11] openat(AT_FDCWD', 'strace: Process 11 detached')).anomalies).toEqual([
      'unreadable trace line: [pid 11] openat(AT_FDCWD',
      'strace: Process 11 detached',
    ]);
  });

  it('keeps at most its bound of events and counts the rest', () => {
    const observer = new TraceObserver(2);
    for (const line of trace(...Array.from({ length: 5 }, () => '[pid 11] kill(1, SIGTERM) = 0')))
      observer.line(line);
    expect(observer.result()).toMatchObject({ dropped: 3 });
    expect(observer.result().events).toHaveLength(2);
  });
});

describe('the testimony held against the kernel’s view', () => {
  const observed = observe(
    trace(
      '[pid 11] openat(3</>, "tmp/evil.py", O_WRONLY|O_CREAT, 0777) = 4</tmp/evil.py>',
      '[pid 11] connect(4<socket:[1]>, {sa_family=AF_INET}, 16) = 0',
      '[pid 11] dup2(4, 77) = 77',
    ),
  ).events;

  it('is complete when an audit event accounts for each audited action, unflagged or by another name', () => {
    expect(
      testimonyMissing(observed, [
        { event: 'open', args: ["'tmp/evil.py'", 'None', '577'], flagged: false },
        { event: 'socket.connect', args: ['<socket>', "('127.0.0.1', 80)"], flagged: true },
      ]),
    ).toEqual([]);
  });

  it('says what it lacks; an action CPython never audits (dup2) is not held against it', () => {
    expect(testimonyMissing(observed, [{ event: 'open', args: ["'other.txt'"], flagged: false }])).toEqual([
      {
        event: 'server.testimony-missing',
        args: ['kernel.openat', '/tmp/evil.py', 'O_WRONLY|O_CREAT', '= 4 </tmp/evil.py>'],
        flagged: true,
      },
      {
        event: 'server.testimony-missing',
        args: ['kernel.connect', '4<socket:[1]>', '{sa_family=AF_INET}', '16', '= 0'],
        flagged: true,
      },
    ]);
  });
});

describe('the process filter', () => {
  it('is a BPF program of whole instructions that traps each listed call and a process-making clone', () => {
    const filter = processFilter();
    if (filter === null) throw new Error('this test needs an x86-64 machine');
    expect(filter.length % 8).toBe(0);
    const constants = Array.from({ length: filter.length / 8 }, (_, index) =>
      filter.readUInt32LE(index * 8 + 4),
    );
    for (const nr of Object.values(TRAPPED_CALLS)) expect(constants).toContain(nr);
    expect(constants).toContain(56); // clone, allowed only with CLONE_THREAD
    expect(constants).toContain(0x00010000);
  });
});

describe('bounded lines', () => {
  const read = async (chunks: Buffer[], bounds: { maxBytes: number; maxLine: number }) => {
    const stream = new PassThrough();
    const lines: string[] = [];
    let overflows = 0;
    const done = boundedLines(
      stream,
      bounds,
      (line) => lines.push(line),
      () => (overflows += 1),
    );
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
    await done;
    return { lines, overflows };
  };

  it('gives each line once, across chunks', async () => {
    expect(await read([Buffer.from('a\nb'), Buffer.from('c\n\nd')], { maxBytes: 100, maxLine: 10 })).toEqual({
      lines: ['a', 'bc', ''],
      overflows: 0,
    });
  });

  it('stops at a line longer than its bound, once, and at the total bound', async () => {
    expect(
      await read([Buffer.alloc(8, 120), Buffer.alloc(8, 120), Buffer.from('\nz\n')], {
        maxBytes: 100,
        maxLine: 10,
      }),
    ).toEqual({
      lines: [],
      overflows: 1,
    });
    expect(await read([Buffer.from('a\n'), Buffer.from('b\nc\n')], { maxBytes: 3, maxLine: 10 })).toEqual({
      lines: ['a'],
      overflows: 1,
    });
  });
});
