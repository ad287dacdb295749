import { existsSync } from 'node:fs';
import { bwrapLack, bwrapPath, describeNeeding, STRACE_PATH } from '../../test/helpers/prerequisites';
import { type JailSettings, runPlugin, type TestRunEvent, type TestRunReport } from './index';

/**
 * Each way a plugin made the old, in-process report lie, run through the jail: whatever it does
 * to the runner, the action is in the report's observed_events (the tracer's view from outside),
 * flagged, and the run never ends a clean `done` with nothing flagged.
 */

const settings = (limits: Partial<JailSettings['limits']> = {}): JailSettings => ({
  bwrapPath: bwrapPath(),
  stracePath: STRACE_PATH,
  pythonPath: '/usr/bin/python3',
  limits: {
    cpuSeconds: 5,
    wallSeconds: 20,
    addressSpaceBytes: 512 * 1024 * 1024,
    fileSizeBytes: 16 * 1024 * 1024,
    processes: 16,
    // The CPU limits below are reached before the wall limits on a busy machine too.
    cpuPriority: 'normal',
    ...limits,
  },
  maxEvents: 500,
  maxOutputBytes: 64 * 1024,
});

const plugin = (body: string) => Buffer.from(`DESCRIPTION = "test"\n\n${body.trim()}\n`);
const observedFlagged = (report: TestRunReport, event: string): TestRunEvent[] =>
  report.observed_events.filter((entry) => entry.event === event && entry.flagged);
/** The paths the kernel saw opened for writing outside the working directory (or as code). */
const writesSeen = (report: TestRunReport) =>
  observedFlagged(report, 'kernel.openat').map((event) => event.args[0]);

describeNeeding(bwrapLack(), 'the report seen from outside the plugin', () => {
  it('patching the runner through __main__ or its signal handler’s closure hides nothing', async () => {
    const report = await runPlugin(
      plugin(`
import __main__, signal

def run(PluginInfo):
    try:
        __main__._flagged = lambda *a: False
    except Exception:
        pass
    handler = signal.getsignal(signal.SIGXCPU)
    for cell in getattr(handler, "__closure__", None) or ():
        try:
            if isinstance(cell.cell_contents, dict) and "recording" in cell.cell_contents:
                cell.cell_contents["recording"] = False
        except Exception:
            pass
    open("/tmp/after-patch.py", "w").write("x")
`),
      settings(),
    );
    expect(writesSeen(report)).toContain('/tmp/after-patch.py');
  });

  it('a dup2 over the runner’s channel while acting is itself seen, and so is the act', async () => {
    const report = await runPlugin(
      plugin(`
import os, stat

def run(PluginInfo):
    read_end, write_end = os.pipe()
    for fd in range(3, 1024):
        try:
            mode = os.fstat(fd).st_mode
            if (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) and fd not in (read_end, write_end):
                saved = os.dup(fd)
                os.dup2(write_end, fd)
                open("/tmp/while-silenced.py", "w").write("x")
                os.dup2(saved, fd)
        except OSError:
            pass
`),
      settings(),
    );
    expect(writesSeen(report)).toContain('/tmp/while-silenced.py');
    expect(observedFlagged(report, 'kernel.dup2').length).toBeGreaterThan(0);
  });

  it('a str subclass acting in its __repr__ inside the hook, and a second thread’s 20 writes, are all seen', async () => {
    const report = await runPlugin(
      plugin(`
import threading

class Loud(str):
    def __repr__(self):
        open("/tmp/from-repr.py", "w").write("x")
        return "loud"

def writes():
    for index in range(20):
        open("/tmp/thread-%d.txt" % index, "w").write("x")

def run(PluginInfo):
    try:
        open(Loud("plain.txt"), "w").write("x")
    except Exception:
        pass
    worker = threading.Thread(target=writes)
    worker.start()
    for index in range(20):
        open("/tmp/main-%d.txt" % index, "w").write("x")
    worker.join()
`),
      settings(),
    );
    const seen = writesSeen(report);
    expect(seen).toContain('/tmp/from-repr.py');
    expect(seen.filter((file) => file.startsWith('/tmp/thread-'))).toHaveLength(20);
    expect(seen.filter((file) => file.startsWith('/tmp/main-'))).toHaveLength(20);
  });

  it('an exception’s __str__ and a replaced stderr.flush, run after recording stops, are seen', async () => {
    const report = await runPlugin(
      plugin(`
import sys

class Late(Exception):
    def __str__(self):
        open("/tmp/from-str.py", "w").write("x")
        return "late"

def flush():
    open("/tmp/from-flush.py", "w").write("x")

def run(PluginInfo):
    sys.stderr.flush = flush
    sys.stdout.flush = flush
    raise Late()
`),
      settings(),
    );
    const seen = writesSeen(report);
    expect(seen).toContain('/tmp/from-str.py');
    expect(seen).toContain('/tmp/from-flush.py');
  });

  it('code compiled under a library’s file name, and a path through a directory descriptor, are judged where they land', async () => {
    const report = await runPlugin(
      plugin(`
import os

def run(PluginInfo):
    exec(compile("open('/tmp/frozen.py', 'w').write('x')", "<frozen importlib._bootstrap>", "exec"))
    work = os.open(".", os.O_RDONLY)
    os.close(os.open("../tmp/through-dir-fd.py", os.O_WRONLY | os.O_CREAT, dir_fd=work))
    root = os.open("..", os.O_RDONLY, dir_fd=work)
    os.close(os.open("tmp/from-root.txt", os.O_WRONLY | os.O_CREAT, dir_fd=root))
`),
      settings(),
    );
    expect(report.status).toBe('done');
    expect(writesSeen(report)).toEqual(
      expect.arrayContaining(['/tmp/frozen.py', '/tmp/through-dir-fd.py', '/tmp/from-root.txt']),
    );
  });

  it('_posixsubprocess.fork_exec, which CPython does not audit, is refused, flagged and missing from the testimony', async () => {
    const report = await runPlugin(
      plugin(`
import _posixsubprocess, os

def run(PluginInfo):
    read_end, write_end = os.pipe()
    _posixsubprocess.fork_exec(
        [b"/usr/bin/true"], [b"/usr/bin/true"], True, (), None, None,
        -1, -1, -1, -1, -1, -1, read_end, write_end, False, False,
        -1, None, None, -1, -1, None, True,
    )
`),
      settings(),
    );
    expect(report).toMatchObject({ status: 'failed', limit: 'processes' });
    expect(observedFlagged(report, 'kernel.denied')).toHaveLength(1);
    expect(observedFlagged(report, 'server.testimony-missing').map((event) => event.args[0])).toContain(
      'kernel.denied',
    );
  });

  it('a seccomp filter of the plugin’s own, which could outrank the tracer’s, is refused: prctl or seccomp', async () => {
    for (const call of ['libc.prctl(22, 2, 0, 0, 0)', 'libc.syscall(317, 1, 0, 0)']) {
      const report = await runPlugin(
        plugin(`
import ctypes

def run(PluginInfo):
    libc = ctypes.CDLL(None)
    return ${call}
`),
        settings(),
      );
      expect({ status: report.status, limit: report.limit }).toEqual({ status: 'failed', limit: null });
      expect(observedFlagged(report, 'kernel.denied').map((event) => event.args[0])).toEqual([
        call.includes('prctl') ? 'prctl' : 'seccomp',
      ]);
    }
  });

  it.each([
    ['a memfd', 'import os\n    os.memfd_create("hoard")', 'memfd_create'],
    ['SysV shared memory', 'import ctypes\n    ctypes.CDLL(None).shmget(0, 1 << 30, 0o1600)', 'shmget'],
  ])('memory the address-space limit misses is refused: %s', async (_name, body, call) => {
    const report = await runPlugin(plugin(`def run(PluginInfo):\n    ${body}\n`), settings());
    expect(observedFlagged(report, 'kernel.denied').map((event) => event.args[0])).toEqual([call]);
    expect(report.status).toBe('failed');
  });

  it('the root, /runner, /dev and /dev/shm take no write: only /work and /tmp, each sized', async () => {
    const report = await runPlugin(
      plugin(`
def run(PluginInfo):
    refused = []
    for target in ("/x", "/runner/x", "/plugin/x", "/dev/x", "/dev/shm/x"):
        try:
            open(target, "w").write("x")
        except OSError as error:
            refused.append(error.errno)
    open("/work/ok", "w").write("x")
    open("/tmp/ok", "w").write("x")
    return refused
`),
      settings(),
    );
    expect(report).toMatchObject({ status: 'done', return_value: '[30, 30, 30, 30, 30]' });
  });

  it('threads share one process’s limits: four busy threads end at the CPU limit of the run', async () => {
    const report = await runPlugin(
      plugin(`
import threading

def spin():
    while True:
        pass

def run(PluginInfo):
    for _ in range(4):
        threading.Thread(target=spin, daemon=True).start()
    spin()
`),
      settings({ cpuSeconds: 1 }),
    );
    expect({ status: report.status, limit: report.limit }).toEqual({ status: 'timed-out', limit: 'cpu' });
  });

  it('a flood of the channel without a newline ends the run at its output limit, in bounded memory', async () => {
    const report = await runPlugin(
      plugin(`
import os

def run(PluginInfo):
    chunk = b"x" * (1 << 20)
    while True:
        for fd in range(3, 1024):
            try:
                os.write(fd, chunk)
            except OSError:
                pass
`),
      settings({ wallSeconds: 60 }),
    );
    expect({ status: report.status, limit: report.limit }).toEqual({ status: 'failed', limit: 'output' });
  });

  it('leaves nothing on the host', () => {
    for (const file of [
      '/tmp/after-patch.py',
      '/tmp/while-silenced.py',
      '/tmp/from-repr.py',
      '/tmp/frozen.py',
    ]) {
      expect(existsSync(file)).toBe(false);
    }
  });
});
