import { testJailSettings, testPlugin } from '../../test/helpers/jail-settings';
import { bwrapLack, describeNeeding } from '../../test/helpers/prerequisites';
import { runPlugin, type TestRunEvent, type TestRunReport } from './index';

/**
 * The runner's testimony (`report.events`) under a plugin that knows it is being recorded: each
 * case is a way a red team made the testimony lie. The plugin does the trick, then acts; the act
 * must still be there, flagged, or a flagged runner.* event must name the trick.
 */

const settings = () => testJailSettings({ cpuSeconds: 10, wallSeconds: 30 }, { maxEvents: 4000 });
const run = (body: string): Promise<TestRunReport> => runPlugin(testPlugin(body), settings());
const flagged = (events: TestRunEvent[], event: string) =>
  events.filter((entry) => entry.event === event && entry.flagged);
const firstArgs = (events: TestRunEvent[], event: string) =>
  flagged(events, event).map((entry) => entry.args[0]);
const quoted = (text: string) => `'${text}'`;

describeNeeding(bwrapLack(), "the runner's testimony under a plugin that tries to make it lie", () => {
  it('keeps its state and functions out of reach: a clean __main__, no signal handler, its own builtins', async () => {
    const report = await run(`
import __main__, builtins, signal

def run(PluginInfo):
    print("main", sorted(name for name in vars(__main__) if not name.startswith("__")))
    __main__._flagged = lambda *args: False
    __main__._inside = lambda *args: True
    handler = signal.getsignal(signal.SIGXCPU)
    print("sigxcpu", handler is signal.SIG_DFL, getattr(handler, "__closure__", None))
    saved = builtins.isinstance, builtins.any, builtins.len
    builtins.isinstance = lambda *args: False
    builtins.any = lambda *args: False
    builtins.len = lambda *args: 0
    try:
        # The plugin's own code sees the builtins it changed; the runner's does not.
        print("own isinstance", isinstance(1, int), __builtins__ is builtins)
        open("/tmp/after-the-trick.py", "w").close()
    finally:
        builtins.isinstance, builtins.any, builtins.len = saved
`);
    expect(report).toMatchObject({ status: 'done', limit: null, exception: null });
    expect(report.stdout).toBe('main []\nsigxcpu True None\nown isinstance False True\n');
    expect(firstArgs(report.events, 'open')).toEqual([quoted('/tmp/after-the-trick.py')]);
    // The builtins were put back before the run ended: nothing to see there, the hook used its own.
    expect(flagged(report.events, 'runner.builtins-changed')).toEqual([]);
  });

  it('guards re-entry per thread: no write of a second thread is lost, and a signal handler run inside the hook is recorded as runner.reentered', async () => {
    const report = await run(`
import signal, threading

HANDLED = []

def writer():
    for index in range(20):
        open("/tmp/thread-%d.py" % index, "w").close()

def handler(signum, frame):
    index = len(HANDLED)
    HANDLED.append(index)
    open("/tmp/signal-%d.py" % index, "w").close()

def run(PluginInfo):
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
    thread = threading.Thread(target=writer)
    thread.start()
    for index in range(1500):
        open("/work/noise-%d" % (index % 10), "w").close()
    thread.join()
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    print("handled", len(HANDLED))
`);
    expect(report).toMatchObject({ status: 'done', exception: null, events_dropped: 0 });
    const opened = firstArgs(report.events, 'open');
    const threadWrites = opened.filter((path) => path.startsWith("'/tmp/thread-"));
    expect(new Set(threadWrites).size).toBe(20);
    const handled = Number(/handled (\d+)/.exec(report.stdout)?.[1]);
    expect(handled).toBeGreaterThan(0);
    const reentered = flagged(report.events, 'runner.reentered')
      .filter((entry) => entry.args[0] === "'open'")
      .map((entry) => entry.args[1]);
    const signalWrites = [...opened, ...reentered].filter((path) => path.startsWith("'/tmp/signal-"));
    // Every write of the handler is in the testimony, flagged: as an open, or as a re-entry.
    expect(new Set(signalWrites).size).toBe(handled);
  });

  it("calls no object of the plugin's inside the hook or after the run: str subclasses, metaclasses, exceptions, streams", async () => {
    const report = await run(`
import sys

CALLS = []

class Path(str):
    def __repr__(self):
        CALLS.append("repr")
        return "'/work/harmless'"
    def __getitem__(self, key):
        CALLS.append("getitem")
        return "/work/harmless"
    def __len__(self):
        CALLS.append("len")
        return 1
    def __str__(self):
        CALLS.append("str")
        return "/work/harmless"
    def __eq__(self, other):
        CALLS.append("eq")
        return True
    __hash__ = str.__hash__

class Meta(type):
    def __getattribute__(cls, name):
        CALLS.append("meta " + name)
        return type.__getattribute__(cls, name)

class Sneaky(metaclass=Meta):
    @property
    def __class__(self):
        CALLS.append("__class__")
        return str

class Loud(Exception):
    def __str__(self):
        open("/tmp/exception-str.py", "w").close()
        return "nothing to see"
    __repr__ = __str__

class Stream:
    def write(self, text):
        return len(text)
    def flush(self):
        open("/tmp/stream-flush.py", "w").close()

def run(PluginInfo):
    path, sneaky = Path("/tmp/subclass.py"), Sneaky()
    CALLS.clear()
    open(path, "w").close()
    sys.audit("plugin.probe", sneaky, path, [sneaky], {path: sneaky})
    print("calls inside the hook", CALLS)
    sys.stdout.flush = Stream().flush
    sys.stderr = Stream()
    raise Loud(sneaky, "shown")
`);
    expect(report.status).toBe('done');
    expect(report.stdout).toBe('calls inside the hook []\n');
    expect(firstArgs(report.events, 'open')).toEqual([quoted('/tmp/subclass.py')]);
    expect(report.events).toContainEqual({
      event: 'plugin.probe',
      args: ['<Sneaky>', "'/tmp/subclass.py'", '[<Sneaky>]', "{'/tmp/subclass.py': <Sneaky>}"],
      flagged: false,
    });
    // The exception is formatted from its arguments, its __str__ never called.
    expect(report.exception).toMatch(
      /^Traceback \(most recent call last\):\n {2}File "\/plugin\/plugin.py", line \d+, in run\n/,
    );
    expect(report.exception).toMatch(/\nplugin\.Loud: \(<Sneaky>, 'shown'\)\n$/);
    const named = (path: string) =>
      report.events.filter((entry) => entry.args.includes(quoted(path)) || entry.args[1] === quoted(path));
    expect(named('/tmp/exception-str.py')).toEqual([]);
    expect(named('/tmp/stream-flush.py')).toEqual([]);
  });

  it('judges library code by what the import machinery really loaded, not by the file name the caller gives', async () => {
    const report = await run(`
import importlib._bootstrap_external as external

SOURCE = "import sys\\nframe = sys._getframe(0)\\n"

def run(PluginInfo):
    for name in ("<frozen importlib._bootstrap>", "/usr/lib/python3.11/os.py"):
        exec(compile(SOURCE, name, "exec"), {})
    # The machinery's own function, handed the plugin's bytes and a library file's name.
    exec(external.SourceLoader.source_to_code(None, SOURCE.encode(), "/usr/lib/python3.11/os.py"), {})
    # What the library does while it is really imported stays quiet.
    import json, pathlib, dataclasses, typing
`);
    expect(report).toMatchObject({ status: 'done', exception: null });
    expect(flagged(report.events, 'compile').map((entry) => entry.args[1])).toEqual([
      "'<frozen importlib._bootstrap>'",
      "'/usr/lib/python3.11/os.py'",
      "'/usr/lib/python3.11/os.py'",
    ]);
    expect(flagged(report.events, 'exec')).toHaveLength(3);
    expect(flagged(report.events, 'sys._getframe')).toHaveLength(3);
    expect(new Set(report.events.filter((entry) => entry.flagged).map((entry) => entry.event))).toEqual(
      new Set(['compile', 'exec', 'sys._getframe']),
    );
    expect(report.events).toContainEqual({
      event: 'import',
      args: ["'dataclasses'", 'None'],
      flagged: false,
    });

    // The machinery patched (a class attribute set: CPython does not audit it) would hand the
    // real loader the plugin's bytes for a library file: from then on an import is not library code.
    const patched = await run(`
import importlib._bootstrap_external as external

real = external.FileLoader.get_data

def get_data(self, path):
    return real(self, path)

def run(PluginInfo):
    external.FileLoader.get_data = get_data
    import colorsys
`);
    expect(patched).toMatchObject({ status: 'done', exception: null });
    expect(flagged(patched.events, 'runner.import-machinery-changed')).toHaveLength(1);
    expect(flagged(patched.events, 'marshal.loads')).toHaveLength(1);
    expect(flagged(patched.events, 'exec')).toHaveLength(1);
  });

  it('resolves paths relative to a directory descriptor (dir_fd) and paths whose .. leaves the working directory', async () => {
    const report = await run(`
import os

def attempt(action):
    try:
        action()
    except OSError as error:
        print(type(error).__name__)

def run(PluginInfo):
    usr = os.open("/usr", os.O_RDONLY | os.O_DIRECTORY)
    attempt(lambda: os.open("local/evil-data", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=usr))
    root = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=usr)
    attempt(lambda: os.mkdir("local/evil-dir", dir_fd=usr))
    attempt(lambda: os.listdir(root))
    os.close(root)
    os.close(usr)
    with open("quiet.txt", "w") as out:
        out.write("no directory descriptor is open any more")
    attempt(lambda: open("../work/loud.txt", "w").close())
`);
    expect(report).toMatchObject({ status: 'done', exception: null });
    const open = report.events.filter((entry) => entry.event === 'open');
    const note = "'runner: relative, while a directory descriptor is open on /usr'";
    expect(open.find((entry) => entry.args[0] === "'local/evil-data'")).toMatchObject({ flagged: true });
    expect(open.find((entry) => entry.args[0] === "'local/evil-data'")?.args).toContain(note);
    expect(open.find((entry) => entry.args[0] === "'..'")).toMatchObject({ flagged: true });
    expect(flagged(report.events, 'os.mkdir')[0]?.args).toEqual([
      "'local/evil-dir'",
      '511',
      expect.stringMatching(/^\d+$/),
      "'runner: relative to a directory descriptor on /usr'",
    ]);
    expect(flagged(report.events, 'os.listdir')).toHaveLength(1);
    expect(open.find((entry) => entry.args[0] === "'quiet.txt'")).toMatchObject({ flagged: false });
    expect(open.find((entry) => entry.args[0] === "'../work/loud.txt'")).toMatchObject({
      flagged: true,
      args: expect.arrayContaining(["'runner: leaves the working directory'"]) as unknown,
    });
  });

  it('flags the import of modules that reach below the audits, but not a library module importing them for itself', async () => {
    const library = await run(`
def run(PluginInfo):
    import subprocess
    return subprocess.PIPE
`);
    expect(library).toMatchObject({ status: 'done', exception: null });
    expect(library.events).toContainEqual({
      event: 'import',
      args: ["'_posixsubprocess'", 'None'],
      flagged: false,
    });
    expect(library.events.filter((entry) => entry.flagged)).toEqual([]);

    const direct = await run(`
def run(PluginInfo):
    import _posixsubprocess, _testcapi
    return _posixsubprocess.fork_exec is not None
`);
    expect(direct).toMatchObject({ status: 'done', exception: null });
    expect(firstArgs(direct.events, 'import')).toEqual(["'_posixsubprocess'", "'_testcapi'"]);
    expect(
      flagged(direct.events, 'runner.source-introspection').map((entry) => entry.args.slice(0, 2)),
    ).toEqual([
      ["'module'", "'_posixsubprocess'"],
      ["'module'", "'_testcapi'"],
    ]);
  });

  it("flags what CPython does not audit from the plugin's source, before any of its code runs", async () => {
    const report = await run(`
import functools, inspect, sys

def run(PluginInfo):
    namespace = run.__globals__
    caller = sys._getframe(0).f_back
    name = "f_" + "globals"
    found = getattr(caller, name), caller.f_locals, functools.reduce(getattr, [name], caller)
    return len(namespace), "{0.gi_frame}".format(x for x in ()) is not None, inspect.getmembers(caller)
`);
    expect(report).toMatchObject({ status: 'done', exception: null });
    const introspection = report.events.filter((entry) => entry.event === 'runner.source-introspection');
    expect(introspection.map((entry) => [...entry.args, entry.flagged])).toEqual([
      ["'attribute'", "'__globals__'", '6', true],
      ["'attribute'", "'f_back'", '7', true],
      ["'dynamic attribute'", "'getattr'", '9', true],
      ["'attribute'", "'f_locals'", '9', true],
      ["'dynamic attribute'", "'getattr'", '9', true],
      ["'string'", "'gi_frame'", '10', true],
      ["'dynamic attribute'", "'getmembers'", '10', true],
    ]);
    // Sent before the plugin's code ran: they lead the testimony.
    expect(report.events.slice(0, introspection.length)).toEqual(introspection);
    expect(flagged(report.events, 'sys._getframe')).toHaveLength(1);
  });

  it("refuses an audit hook of the plugin: it would be handed the runner's own audited reads", async () => {
    const report = await run(`
import sys

SEEN = []

def run(PluginInfo):
    sys.addaudithook(lambda event, args: SEEN.append(args))
    open("/tmp/after-the-spy.py", "w").close()
    import json
    print("the plugin's hook saw", len(SEEN))
`);
    expect(report).toMatchObject({ status: 'done', exception: null });
    expect(report.stdout).toBe("the plugin's hook saw 0\n");
    expect(flagged(report.events, 'sys.addaudithook')).toEqual([
      {
        event: 'sys.addaudithook',
        args: ["'runner: refused: no other audit hook is added'"],
        flagged: true,
      },
    ]);
    expect(firstArgs(report.events, 'open')).toEqual([quoted('/tmp/after-the-spy.py')]);
  });

  it('closes every descriptor but 0, 1, 2 and its channel before the plugin runs', async () => {
    const report = await run(`
import os

def run(PluginInfo):
    seen = []
    for name in os.listdir("/proc/self/fd"):
        try:
            os.readlink("/proc/self/fd/" + name)
        except OSError:
            continue  # the listing's own descriptor, closed by now
        seen.append(int(name))
    print(sorted(seen))
`);
    expect(report).toMatchObject({ status: 'done', exception: null });
    const seen = JSON.parse(report.stdout) as number[];
    expect(seen.slice(0, 3)).toEqual([0, 1, 2]);
    expect(seen).toHaveLength(4);
    expect(seen[3]).toBeGreaterThanOrEqual(64);
  });
});
