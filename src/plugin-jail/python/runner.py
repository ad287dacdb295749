"""The test-run's runner, inside the jail: records what a plugin does, through CPython's audit hooks.

Started by jail-run.ts as `python3 -I -S -B /runner/runner.py <settings JSON>` with:
  fd 0  the run's token (one line), then end of file;
  fd 3  the report channel (a pipe to the parent);
  /plugin/plugin.py  the plugin's bytes, read-only;
  /runner/owtf_stand_in.py  the stand-in for the framework's `owtf` package, read-only;
  /work  the empty working directory (tmpfs).

Each event is written to the channel as it happens, so what a plugin did before it crashed,
looped or killed its process is already out. Every line is `<token> <json>`: the token
is read from fd 0 before the plugin runs and lives only in this module's closures, so a line
the plugin writes to the channel itself (it shares the process) lacks it, or, if the plugin
dug it out of memory, the digging (gc, frames) was recorded first. The parent trusts no fact
it can measure itself (status, wall time, stdout, stderr) to this channel.
"""

import builtins
import errno
import json
import os
import random
import resource
import signal
import sys
import traceback
import types

SETTINGS = json.loads(sys.argv[1])
WORK_DIR = "/work"
PLUGIN_PATH = "/plugin/plugin.py"
STAND_IN_PATH = "/runner/owtf_stand_in.py"
CHANNEL_FD = 3
# Opened (it does not exist) just before the plugin's code runs: the tracer outside the jail
# judges every system call after the first open of this path as the plugin's.
PLUGIN_STARTS = "/runner/plugin-starts"
# The interpreter's own files: reading them (every import does) is not worth a reviewer's look.
LIBRARY_ROOTS = tuple(sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}))
QUIET_READ_ROOTS = LIBRARY_ROOTS + ("/plugin",)
# Code written to a file and imported later, or a path entry: a write of these is always flagged.
CODE_SUFFIXES = (".py", ".pyc", ".pth", ".so")
# Events that a library module raises while it is being imported (compiling a namedtuple,
# loading its own bytecode) are the import's, which is recorded; from the plugin they are flagged.
IMPORT_TIME_QUIET = {"marshal.loads", "compile", "sys._getframe", "object.__getattr__"}
MAX_EVENTS = SETTINGS["max_events"]
MAX_ARG_CHARS = SETTINGS["max_arg_chars"]
MAX_TEXT_CHARS = 4000

SPAWNS = {
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "os.spawn",
    "pty.spawn",
    "os.startfile",
}
NETWORK = {
    "socket.connect",
    "socket.bind",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
    "socket.sendto",
    "socket.sendmsg",
    "http.client.connect",
    "urllib.Request",
    "ftplib.connect",
    "smtplib.connect",
    "poplib.connect",
    "imaplib.open",
    "telnetlib.Telnet.open",
    "webbrowser.open",
}
FS_CHANGES = {
    "os.chmod",
    "os.chown",
    "os.chflags",
    "os.link",
    "os.mkdir",
    "os.remove",
    "os.rename",
    "os.rmdir",
    "os.symlink",
    "os.truncate",
    "os.utime",
    "os.setxattr",
    "os.removexattr",
    "shutil.chown",
    "shutil.copyfile",
    "shutil.copymode",
    "shutil.copystat",
    "shutil.copytree",
    "shutil.move",
    "shutil.rmtree",
    "shutil.make_archive",
    "shutil.unpack_archive",
}
LISTINGS = {"os.listdir", "os.scandir", "glob.glob", "glob.glob/2", "os.listxattr", "os.getxattr"}
INTROSPECTION = {
    "sys._getframe",
    "sys._current_frames",
    "sys._current_exceptions",
    "sys.addaudithook",
    "sys.setprofile",
    "sys.settrace",
    "sys.excepthook",
    "sys.unraisablehook",
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "object.__getattr__",
    "function.__new__",
    "code.__new__",
    "marshal.loads",
    "marshal.load",
    "pickle.find_class",
    "cpython.run_command",
    "cpython.run_file",
    "cpython.run_module",
    "cpython.run_startup",
    "os.putenv",
    "os.unsetenv",
    "os.kill",
    "os.killpg",
    "signal.pthread_kill",
    "resource.setrlimit",
    "resource.prlimit",
    "mmap.__new__",
    "fcntl.ioctl",
}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _inside(path, roots):
    return any(path == root or path.startswith(root + "/") for root in roots)


def _real(path):
    if isinstance(path, int):
        return None
    try:
        return os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None


def _printable(value, depth=0):
    """Arguments made printable without running the plugin's code (no repr of its objects)."""
    if value is None or isinstance(value, (bool, int, float)):
        shown = repr(value)
    elif isinstance(value, (str, bytes, bytearray)):
        shown = repr(value[: MAX_ARG_CHARS + 1] if len(value) > MAX_ARG_CHARS else value)
    elif isinstance(value, types.CodeType):
        shown = "<code %s %s:%d>" % (value.co_name, value.co_filename, value.co_firstlineno)
    elif isinstance(value, (tuple, list)) and depth < 2:
        parts = [_printable(item, depth + 1) for item in value[:16]]
        if len(value) > 16:
            parts.append("...")
        shown = ("(%s)" if isinstance(value, tuple) else "[%s]") % ", ".join(parts)
    elif isinstance(value, dict) and depth < 2:
        parts = [
            "%s: %s" % (_printable(k, depth + 1), _printable(v, depth + 1))
            for k, v in list(value.items())[:16]
        ]
        shown = "{%s}" % ", ".join(parts)
    elif isinstance(value, types.ModuleType):
        shown = "<module %s>" % (value.__spec__.name if value.__spec__ else "?")
    else:
        shown = "<%s>" % type(value).__qualname__
    return shown if len(shown) <= MAX_ARG_CHARS else shown[:MAX_ARG_CHARS] + "..."


def _library_file(filename):
    if filename.startswith("<frozen "):
        return True
    return filename.startswith("/") and _inside(_real(filename) or "", LIBRARY_ROOTS)


def _code_is_library(code):
    return isinstance(code, types.CodeType) and _library_file(code.co_filename)


def _during_library_import(frame):
    """True when the event comes from a library module's code run by the import machinery."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<frozen importlib._bootstrap"):
            return True
        if not _library_file(filename):
            return False
        frame = frame.f_back
    return False


def _flagged(event, args, frame):
    """What a reviewer must look at."""
    if event in IMPORT_TIME_QUIET and _during_library_import(frame):
        return False
    if event == "owtf.command":
        # The stand-in framework's CommandDump or RunCommand (owtf_stand_in.py): flagged when the
        # plugin supplied a command of its own, which the framework would run in a shell.
        return len(args) < 3 or args[2] is not False
    if event in SPAWNS or event in NETWORK or event in INTROSPECTION:
        return True
    if event.startswith("ctypes.") or event.startswith("os.exec") or event.startswith("winreg."):
        return True
    if event == "open":
        path, mode, flags = (list(args) + [None, None, None])[:3]
        real = _real(path)
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & WRITE_FLAGS
        )
        if real is None:  # a descriptor: os.fdopen and the like
            return bool(writes)
        if writes:
            return real.endswith(CODE_SUFFIXES) or not _inside(real, (WORK_DIR,))
        return not _inside(real, (WORK_DIR,) + QUIET_READ_ROOTS)
    if event in FS_CHANGES:
        paths = [_real(a) for a in args if isinstance(a, (str, bytes))]
        return not paths or any(p is None or not _inside(p, (WORK_DIR,)) for p in paths)
    if event in LISTINGS:
        real = _real(args[0]) if args and isinstance(args[0], (str, bytes)) else WORK_DIR
        return real is None or not _inside(real, (WORK_DIR,) + QUIET_READ_ROOTS)
    if event == "compile":
        filename = args[1] if len(args) > 1 else None
        return not (isinstance(filename, str) and _library_file(filename))
    if event == "exec":
        if _code_is_library(args[0] if args else None):
            return False
        # A library module's own exec (a namedtuple's) while it is imported; module code the
        # import machinery runs is judged by its file above.
        caller = frame.f_code.co_filename if frame is not None else ""
        return caller.startswith("<frozen importlib") or not _during_library_import(frame)
    if event in ("object.__setattr__", "object.__delattr__"):
        target = args[0] if args else None
        name = args[1] if len(args) > 1 else ""
        builtin_type = isinstance(target, type) and target.__module__ == "builtins"
        return builtin_type or (isinstance(name, str) and name in ("__code__", "__globals__", "__class__", "__bases__", "__dict__"))
    return False


def _arguments(event, args):
    if event == "import":
        # (module, filename, sys.path, sys.meta_path, sys.path_hooks): the first two say it.
        args = args[:2]
    return [_printable(a) for a in args]


def main():
    token = sys.stdin.readline().strip()
    # The plugin reads no token from stdin, and finds the channel under no number it was given.
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    soft_files, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    channel = random.SystemRandom().randrange(64, max(65, min(soft_files, 1024)))
    os.dup2(CHANNEL_FD, channel)
    os.close(CHANNEL_FD)

    write = os.write
    dumps = json.JSONEncoder(ensure_ascii=True).encode
    runner_pid = os.getpid()
    state = {"recorded": 0, "dropped": 0, "busy": False, "recording": False, "skip": None}

    def send(message):
        line = "%s %s\n" % (token, dumps(message))
        data = line.encode("ascii")
        while data:
            written = write(channel, data)
            data = data[written:]

    def hook(event, args):
        if not state["recording"] or state["busy"]:
            return
        if event == "exec" and args and args[0] is state["skip"]:
            state["skip"] = None  # the runner's own exec of the plugin's module code
            return
        state["busy"] = True
        try:
            flagged = _flagged(event, args, sys._getframe(1))
            # Past the bound only what is flagged is still recorded, up to the bound again.
            if state["recorded"] >= MAX_EVENTS and (not flagged or state["recorded"] >= 2 * MAX_EVENTS):
                state["dropped"] += 1
                return
            state["recorded"] += 1
            send({"kind": "event", "event": event, "args": _arguments(event, args), "flagged": bool(flagged)})
        except Exception as error:  # never let the recording change what the plugin sees
            try:
                send({"kind": "event", "event": "runner.error", "args": [_printable(str(error))], "flagged": True})
            except Exception:
                pass
        finally:
            state["busy"] = False

    limit = {"name": None}

    def finish(result):
        state["recording"] = False
        if os.getpid() != runner_pid:  # a child the plugin forked: the runner alone reports
            os._exit(0)
        usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        result.update(
            kind="result",
            limit=limit["name"],
            peak_memory_bytes=max(usage, children) * 1024,
            events_dropped=state["dropped"],
        )
        send(result)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    def out_of_cpu(signum, frame):
        limit["name"] = "cpu"
        finish({"return_value": None, "exception": "CPU time limit reached"})

    signal.signal(signal.SIGXCPU, out_of_cpu)

    cpu = SETTINGS["cpu_seconds"]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (SETTINGS["address_space_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (SETTINGS["file_size_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NPROC, (SETTINGS["processes"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    with open(PLUGIN_PATH, "rb") as plugin_file:
        source = plugin_file.read()
    _install_stand_in()
    os.chdir(WORK_DIR)
    before_builtins = dict(vars(builtins))
    sys_names = ("path", "meta_path", "path_hooks", "excepthook", "displayhook", "modules", "stdout", "stderr")
    before_sys = {name: getattr(sys, name) for name in sys_names}
    before_sys_lists = {name: list(getattr(sys, name)) for name in ("path", "meta_path", "path_hooks")}

    sys.addaudithook(hook)
    return_value = None
    exception = None
    try:
        code = compile(source, PLUGIN_PATH, "exec", dont_inherit=True)
        module = types.ModuleType("plugin")
        module.__file__ = PLUGIN_PATH
        sys.modules["plugin"] = module
        state["skip"] = code
        try:
            os.close(os.open(PLUGIN_STARTS, os.O_RDONLY))
        except OSError:
            pass
        state["recording"] = True
        exec(code, module.__dict__)
        run = module.__dict__.get("run")
        if not callable(run):
            exception = "The plugin defines no run(PluginInfo)"
        else:
            return_value = _printable_result(run(_plugin_info()))
    except BaseException as error:  # SystemExit and KeyboardInterrupt are the plugin's too
        # What follows is the runner's (formatting the traceback reads frames), not the plugin's.
        state["recording"] = False
        if isinstance(error, MemoryError):
            limit["name"] = "address-space"
        elif isinstance(error, OSError) and error.errno == errno.EFBIG:
            limit["name"] = "file-size"
        elif isinstance(error, OSError) and error.errno == errno.EAGAIN:
            limit["name"] = "processes"
        try:
            lines = traceback.format_exception(type(error), error, error.__traceback__)
            exception = "".join(lines)[-MAX_TEXT_CHARS:]
        except BaseException:
            exception = type(error).__qualname__
    state["recording"] = False
    changed = [name for name, value in vars(builtins).items() if before_builtins.get(name, object()) is not value]
    changed += ["-" + name for name in before_builtins if name not in vars(builtins)]
    if changed:
        send({"kind": "event", "event": "runner.builtins-changed", "args": [_printable(changed)], "flagged": True})
    sys_changed = [name for name in sys_names if getattr(sys, name, None) is not before_sys[name]]
    sys_changed += [name for name, items in before_sys_lists.items() if list(getattr(sys, name)) != items]
    if sys_changed:
        send({"kind": "event", "event": "runner.sys-changed", "args": [_printable(sorted(set(sys_changed)))], "flagged": True})
    finish({"return_value": return_value, "exception": exception})


def _install_stand_in():
    """The framework's `owtf` package as stand-ins (owtf_stand_in.py), installed before recording starts."""
    with open(STAND_IN_PATH, "rb") as stand_in_file:
        stand_in_source = stand_in_file.read()
    stand_in = types.ModuleType("_owtf_stand_in")
    stand_in.__file__ = STAND_IN_PATH
    exec(compile(stand_in_source, STAND_IN_PATH, "exec", dont_inherit=True), stand_in.__dict__)
    stand_in.install()


def _printable_result(value):
    # The return value is the plugin's object: its repr runs its code, recorded like the rest.
    try:
        text = repr(value)
    except BaseException as error:
        text = "<repr failed: %s>" % type(error).__qualname__
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS] + "..."


def _plugin_info():
    """A stand-in for the framework's PluginInfo: the fields its plugins read, with harmless values."""
    return {
        "code": "TEST-RUN",
        "group": "web",
        "type": "passive",
        "name": "plugin",
        "title": "Test run",
        "descrip": "A reviewer's test run",
        "file": "plugin.py",
        "dir": "/plugin",
        "args": "",
        "attr": "",
        "pages": [],
    }


if __name__ == "__main__":
    main()
