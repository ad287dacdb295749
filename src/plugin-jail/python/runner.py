"""The test-run's runner, inside the jail: records what a plugin does, through CPython's audit hooks.

Started by jail-command.ts as `python3 -I -B /runner/runner.py <settings JSON>` with:
  fd 0  the run's token (one line), then end of file;
  fd 3  the report channel (a pipe to the parent);
  /plugin/plugin.py  the plugin's bytes, read-only;
  /runner/owtf_stand_in.py  the stand-in for the framework's `owtf` package, read-only;
  /work  the empty working directory (tmpfs).

Each event is written to the channel as it happens, so what a plugin did before it crashed,
looped or killed its process is already out. Every line is `<token> <json>`: the token
is read from fd 0 before the plugin runs and lives only in the recorder's closures, so a line
the plugin writes to the channel itself (it shares the process) lacks it, or, if the plugin
dug it out of memory, the digging (gc, frames) was recorded first. The parent trusts no fact
it can measure itself (status, wall time, stdout, stderr) to this channel.

The plugin shares this process, so what it can reach, it can change. The runner keeps its
testimony out of that reach, and never runs the plugin's code where the plugin is not recorded:

- The runner's functions run in a namespace of their own, copied before the plugin starts, with
  a copy of the builtins (_sealed); `__main__` is then a clean module. No signal handler is
  installed (the kernel's SIGXCPU ends a run at the CPU limit; the server names it).
- Re-entry is per thread; an event that arrives while the runner itself is busy in that thread
  (a signal handler of the plugin's, or plugin code the runner's last steps set off) is recorded
  as `runner.reentered`, flagged, never dropped.
- Inside the hook and after the plugin's run, the runner calls no object of the plugin's:
  values are read with the exact builtin types' own methods, captured here (a str subclass's
  __repr__, __len__ or __getitem__, a metaclass's __getattribute__, an exception's __str__ never
  run), and no module attribute is looked up at call time (the plugin can replace os.lstat).
- Library code is code the real import machinery loaded from the interpreter's own files: code
  objects known by identity, never a file name the caller chose.
- What CPython does not audit (reads of __globals__, __closure__, f_back, ...) is flagged from
  the plugin's source, parsed before its code runs (runner.source-introspection).
- No other audit hook is added (one of the plugin's would be handed the runner's own audited
  reads), no trace function of the plugin's sees the runner's last steps, and the plugin gets
  no descriptor but 0, 1, 2 and the channel.

What it still cannot see: code the plugin runs where no audit event is raised (a signal
handler of the plugin's that fires inside the hook is handed the hook's frame; ctypes writes
to memory); the tracer outside the jail is the witness for those.
"""

import _ast
import _thread
import builtins
import errno
import gc
import io
import json
import os
import random
import re
import resource
import signal
import stat
import sys
import types
from _json import encode_basestring_ascii as _json_string

SETTINGS = json.loads(sys.argv[1])
WORK_DIR = "/work"
PLUGIN_PATH = "/plugin/plugin.py"
STAND_IN_PATH = "/runner/owtf_stand_in.py"
RUNNER_DIR = "/runner/"
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
IMPORT_TIME_QUIET = frozenset({
    "marshal.loads", "compile", "exec", "sys._getframe", "object.__getattr__", "object.__setattr__",
    "object.__delattr__", "function.__new__", "code.__new__",
})
# The events whose judgement needs the frame that raised them.
FRAME_EVENTS = IMPORT_TIME_QUIET | {"import"}
MAX_EVENTS = SETTINGS["max_events"]
MAX_ARG_CHARS = SETTINGS["max_arg_chars"]
MAX_ARGS = 16
MAX_TEXT_CHARS = 4000
MAX_SOURCE_FINDINGS = 200
MAX_SOURCE_BYTES = 1 << 20

SPAWNS = {
    "subprocess.Popen", "os.system", "os.exec", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn",
    "pty.spawn", "os.startfile",
}
NETWORK = {
    "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
    "socket.getnameinfo", "socket.sendto", "socket.sendmsg", "http.client.connect", "urllib.Request",
    "ftplib.connect", "smtplib.connect", "poplib.connect", "imaplib.open", "telnetlib.Telnet.open",
    "webbrowser.open",
}
# File-system changes: where each event's paths are, each with the position of the directory
# descriptor it is relative to (None: the working directory). Unlisted: every str argument.
FS_CHANGES = {
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.chflags": ((0, None),),
    "os.link": ((0, 2), (1, 3)),
    "os.mkdir": ((0, 2),),
    "os.remove": ((0, 1),),
    "os.rename": ((0, 2), (1, 3)),
    "os.rmdir": ((0, 1),),
    "os.symlink": ((0, None), (1, 2)),
    "os.truncate": ((0, None),),
    "os.utime": ((0, 3),),
    "os.setxattr": ((0, None),),
    "os.removexattr": ((0, None),),
    "shutil.chown": ((0, None),),
    "shutil.copyfile": ((0, None), (1, None)),
    "shutil.copymode": ((0, None), (1, None)),
    "shutil.copystat": ((0, None), (1, None)),
    "shutil.copytree": ((0, None), (1, None)),
    "shutil.move": ((0, None), (1, None)),
    "shutil.rmtree": ((0, 1),),
    "shutil.make_archive": ((0, None), (2, None), (3, None)),
    "shutil.unpack_archive": ((0, None), (1, None)),
}
LISTINGS = {
    "os.listdir": ((0, None),),
    "os.scandir": ((0, None),),
    "glob.glob": ((0, None),),
    "glob.glob/2": ((0, 3), (2, 3)),
    "os.listxattr": ((0, None),),
    "os.getxattr": ((0, None),),
}
INTROSPECTION = {
    "sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.addaudithook", "sys.setprofile",
    "sys.settrace", "sys.excepthook", "sys.unraisablehook", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "object.__getattr__", "function.__new__", "code.__new__", "marshal.loads",
    "marshal.load", "pickle.find_class", "cpython.run_command", "cpython.run_file", "cpython.run_module",
    "cpython.run_startup", "os.putenv", "os.unsetenv", "os.kill", "os.killpg", "signal.pthread_kill",
    "resource.setrlimit", "resource.prlimit", "mmap.__new__", "fcntl.ioctl",
}
# Modules whose only use in a plugin is reaching below CPython's audits: spawning without the
# subprocess events (_posixsubprocess.fork_exec), foreign calls and raw memory (ctypes), CPython's
# test modules (internals, unaudited), code in an interpreter without this one's audit hooks
# (_xxsubinterpreters), extension modules and frozen code loaded without the import events (_imp),
# shared memory opened without the open event (_posixshmem). Importing one is flagged, unless a
# library module imports it while it is loaded (subprocess imports _posixsubprocess).
BELOW_AUDITS = frozenset({
    "_posixsubprocess", "_ctypes", "ctypes", "_ctypes_test", "_testcapi", "_testinternalcapi",
    "_testbuffer", "_testclinic", "_testmultiphase", "_testimportmultiple", "_testsinglephase",
    "_xxtestfuzz", "_xxsubinterpreters", "_xxinterpchannels", "_interpreters", "_imp", "_posixshmem",
})
# Attributes CPython does not audit (or audits only some of) that lead from any object to any
# other: functions' globals and closures, frames and their callers, namespaces by name.
SOURCE_ATTRIBUTES = frozenset({
    "__globals__", "__builtins__", "__closure__", "__code__", "__defaults__", "__kwdefaults__", "__dict__",
    "__self__", "__subclasses__", "__bases__", "__base__", "__mro__", "__getattribute__", "cell_contents",
    "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace", "gi_frame", "gi_code", "cr_frame",
    "cr_code", "ag_frame", "ag_code", "tb_frame",
})
SOURCE_NAMES = frozenset({"__builtins__"})
# Functions that reach an attribute (or a module) by a name they are given: harmless only when
# called with a literal name (the position of the name); passed on, or called with a computed
# name, flagged. Those that hand over every attribute (vars, inspect's getmembers and
# getclosurevars: a frame's f_locals, a function's globals) always.
DYNAMIC_CALLS = {"getattr": 1, "setattr": 1, "delattr": 1, "hasattr": 1, "attrgetter": 0, "methodcaller": 0,
                 "getattr_static": 1, "vars": MAX_ARGS, "getmembers": MAX_ARGS, "getmembers_static": MAX_ARGS,
                 "getclosurevars": MAX_ARGS, "__import__": 0, "import_module": 0}
DYNAMIC_IMPORTS = frozenset({"__import__", "import_module"})
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
SENSITIVE_SET_NAMES = frozenset({
    "__code__", "__globals__", "__class__", "__bases__", "__dict__", "__defaults__", "__kwdefaults__",
})
HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time, not one of the interpreter's own
BIG_INT = 10**600
MAX_LINKS = 40
MAX_PATH_CHARS = 4096
MISSING = object()
REFUSED = "refused by the test-run's runner"
FD_DIR = "/proc/self/fd"
# The descriptors looked at for directories: the kernel gives the lowest free number, so a gap
# of 32 closed ones ends the look (one moved higher with dup2 is past it: the tracer sees the dup2).
DESCRIPTOR_GAP = 32
MAX_DESCRIPTORS = 1 << 16

# C functions and descriptors captured now, before the plugin runs: the runner calls these, never
# a module attribute the plugin could have replaced since (os.lstat, posixpath.realpath, json's
# encoder), nor a method a subclass could override.
_lstat = os.lstat
_stat = os.stat
_readlink = os.readlink
_getcwd = os.getcwd
_write = os.write
_getpid = os.getpid
_exit = os._exit
_get_ident = _thread.get_ident
_allocate_lock = _thread.allocate_lock
_gc_disable = gc.disable
_getsignal = signal.getsignal
_gettrace, _settrace = sys.gettrace, sys.settrace
_getprofile, _setprofile = sys.getprofile, sys.setprofile
_setsignal = signal.signal
_SIG_IGN = signal.SIG_IGN
_NSIG = signal.NSIG
_S_ISLNK = stat.S_ISLNK
_S_ISDIR = stat.S_ISDIR
_S_ISREG = stat.S_ISREG
_text_flush = io.TextIOWrapper.flush
_io_open = io.open
_tuple_item = tuple.__getitem__
_str_copy = str.__str__  # an exact str of a str subclass's characters, without its methods
_str_slice = str.__getitem__
_bytes_slice = bytes.__getitem__
_bytes_decode = bytes.decode
_bytearray_slice = bytearray.__getitem__
_int_copy = int.__int__
_float_copy = float.__float__
_type_qualname = type.__dict__["__qualname__"].__get__
_type_module = type.__dict__["__module__"].__get__
_type_flags = type.__dict__["__flags__"].__get__
_type_dict = type.__dict__["__dict__"].__get__
_function_qualname = types.FunctionType.__dict__["__qualname__"].__get__
_tb_frame = types.TracebackType.__dict__["tb_frame"].__get__
_frame_code = types.FrameType.__dict__["f_code"].__get__
_exception_args = BaseException.__dict__["args"].__get__
_exception_traceback = BaseException.__dict__["__traceback__"].__get__
_exception_cause = BaseException.__dict__["__cause__"].__get__
_exception_context = BaseException.__dict__["__context__"].__get__
_exception_suppressed = BaseException.__dict__["__suppress_context__"].__get__
_os_error = {name: OSError.__dict__[name].__get__ for name in ("errno", "strerror", "filename", "filename2")}
_syntax_error = {name: SyntaxError.__dict__[name].__get__ for name in ("msg", "filename", "lineno", "offset", "text")}
_O_DIRECTORY = os.O_DIRECTORY
_EFBIG, _EAGAIN = errno.EFBIG, errno.EAGAIN
CODE_TYPE, FUNCTION_TYPE, MODULE_TYPE = types.CodeType, types.FunctionType, types.ModuleType
FS_ENCODING = sys.getfilesystemencoding()
FS_ERRORS = sys.getfilesystemencodeerrors()

# Identity without id(), which CPython audits (builtins.id): the pointer hash of object itself.
_key = object.__hash__


def _identities(*objects):
    """Objects known by identity (code objects compare equal by content: a plugin can make an equal one)."""
    return {_key(o): o for o in objects}


# The import machinery, by identity. A module's code is library code when the real machinery
# (its own functions, unchanged since start-up) ran it from a file under the interpreter's roots.
_BOOTSTRAP = sys.modules["_frozen_importlib"]
_EXTERNAL = sys.modules["_frozen_importlib_external"]
LOAD_UNLOCKED = _BOOTSTRAP._load_unlocked.__code__
LOADER_METHODS = _identities(
    _EXTERNAL._LoaderBasics.exec_module.__code__,
    _EXTERNAL.SourceLoader.get_code.__code__,
    _EXTERNAL.SourcelessFileLoader.get_code.__code__,
    _EXTERNAL.SourceLoader.source_to_code.__code__,
)
LOADER_TYPES = _identities(_EXTERNAL.SourceFileLoader, _EXTERNAL.SourcelessFileLoader)
LOADER_ATTRIBUTES = frozenset({"name", "path"})
_loader_dict = _EXTERNAL._LoaderBasics.__dict__["__dict__"].__get__
# importlib renames its bootstrap modules when it is first imported: those three may change.
RENAMED = frozenset({"__name__", "__package__", "__file__"})
# zipimport is left out of the library's code: a zip archive can be any file on sys.path.
UNTRUSTED_MODULES = frozenset({"__main__", "zipimport"})


class _Here(Exception):
    """Raised and caught by the hook to find its own frame (sys._getframe is audited)."""


def _inside(path, roots):
    return any(path == root or path.startswith(root + "/") for root in roots)


def _text(value):
    """An exact str of a str (or str subclass), else None."""
    return _str_copy(value) if issubclass(type(value), str) else None


def _type_name(kind):
    return _str_copy(_type_qualname(kind))


def _number(value):
    """An exact int of an int (or int subclass, not bool), else None."""
    kind = type(value)
    return _int_copy(value) if issubclass(kind, int) and kind is not bool else None


def _printable(value, depth=0, limit=MAX_ARG_CHARS):
    """Arguments made printable without running the plugin's code: the exact builtin types' own
    methods read them (a subclass's __repr__, __len__ or __getitem__ is never called), anything
    else shows as <TypeName>."""
    kind = type(value)
    if value is None or kind is bool:
        shown = "None" if value is None else ("True" if value else "False")
    elif issubclass(kind, int):
        number = _int_copy(value)
        shown = repr(number) if -BIG_INT < number < BIG_INT else "<int of %d bits>" % number.bit_length()
    elif issubclass(kind, float):
        shown = repr(_float_copy(value))
    elif issubclass(kind, str):
        shown = repr(_str_slice(value, slice(0, limit + 1)))
    elif issubclass(kind, bytes):
        shown = repr(_bytes_slice(value, slice(0, limit + 1)))
    elif issubclass(kind, bytearray):
        shown = repr(_bytearray_slice(value, slice(0, limit + 1)))
    elif kind is CODE_TYPE:
        shown = "<code %s %s:%d>" % (_text(value.co_name), _text(value.co_filename), value.co_firstlineno)
    elif (kind is tuple or kind is list) and depth < 2:
        parts = [_printable(item, depth + 1) for item in value[:MAX_ARGS]]
        if len(value) > MAX_ARGS:
            parts.append("...")
        shown = ("(%s)" if kind is tuple else "[%s]") % ", ".join(parts)
    elif kind is dict and depth < 2:
        parts = []
        for key, item in dict.items(value):
            if len(parts) >= MAX_ARGS:
                parts.append("...")
                break
            parts.append("%s: %s" % (_printable(key, depth + 1), _printable(item, depth + 1)))
        shown = "{%s}" % ", ".join(parts)
    elif issubclass(kind, type):
        shown = "<class %s>" % _type_name(value)
    elif kind is FUNCTION_TYPE:
        shown = "<function %s>" % _str_copy(_function_qualname(value))
    else:
        shown = "<%s>" % _type_name(kind)
    return shown if len(shown) <= limit else shown[:limit] + "..."


def _arguments(event, args):
    if event == "import":
        # (module, filename, sys.path, sys.meta_path, sys.path_hooks): the first two say it.
        args = args[:2]
    shown = [_printable(a) for a in args[:MAX_ARGS]]
    if len(args) > MAX_ARGS:
        shown.append("...")
    return shown


def _path_text(value):
    """The path an argument names, as an exact str, when it is a str or bytes; else None (a
    PathLike's __fspath__ is the plugin's code: the runner does not call it)."""
    kind = type(value)
    if issubclass(kind, str):
        text = _str_slice(value, slice(0, MAX_PATH_CHARS + 1))
    elif issubclass(kind, bytes):
        text = _bytes_decode(_bytes_slice(value, slice(0, MAX_PATH_CHARS + 1)), FS_ENCODING, FS_ERRORS)
    else:
        return None
    return text if 0 < len(text) <= MAX_PATH_CHARS and "\0" not in text else None


def _resolve(path, base):
    """os.path.realpath of `path` relative to `base`, made with the runner's own calls: symbolic
    links followed (at most 40), a missing part kept as written. (path, its lstat mode or None),
    or (None, None) past the links' bound."""
    if not path.startswith("/"):
        path = base + "/" + path
    todo = path.split("/")
    todo.reverse()
    done = []
    mode = None
    links = 0
    while todo:
        name = todo.pop()
        if name == "" or name == ".":
            continue
        if name == "..":
            if done:
                done.pop()
            mode = None
            continue
        candidate = "/" + "/".join(done + [name])
        try:
            mode = _tuple_item(_lstat(candidate), 0)
        except (OSError, ValueError):
            mode = None
        if mode is not None and _S_ISLNK(mode):
            links += 1
            if links > MAX_LINKS:
                return None, None
            try:
                target = _readlink(candidate)
            except (OSError, ValueError):
                done.append(name)
                continue
            if target.startswith("/"):
                done = []
            parts = target.split("/")
            parts.reverse()
            todo.extend(parts)
        else:
            done.append(name)
    return "/" + "/".join(done), mode


def _leaves(path):
    """True when a relative path's `..` goes above the directory it starts from."""
    depth = 0
    for name in path.split("/"):
        if name == "..":
            depth -= 1
            if depth < 0:
                return True
        elif name and name != ".":
            depth += 1
    return False


def _descriptor_target(fd):
    """Where descriptor `fd` is open, as the kernel says (/proc/self/fd), or None."""
    try:
        target = _readlink(FD_DIR + "/" + str(fd))
    except (OSError, ValueError):
        return None
    return target if target.startswith("/") else None


def _file_writes(mode, flags):
    mode = _text(mode)
    flags = _number(flags)
    return (mode is not None and any(c in mode for c in "wax+")) or (flags is not None and bool(flags & WRITE_FLAGS))


def _judge_path(value, dir_fd, cwd):
    """(real path, note) of a path argument: relative to the directory descriptor `dir_fd` when
    one is given (as the kernel sees it), else to the working directory; (None, why) when the
    runner cannot tell."""
    if _number(value) is not None:
        target = _descriptor_target(_number(value))
        return (target, None) if target is not None else (None, "a descriptor the runner cannot resolve")
    text = _path_text(value)
    if text is None:
        return None, "a path object the runner does not read (its __fspath__ is the plugin's)"
    base, note = cwd, None
    if not text.startswith("/"):
        fd = _number(dir_fd)
        if fd is not None and fd >= 0:
            base = _descriptor_target(fd)
            if base is None:
                return None, "relative to a directory descriptor the runner cannot resolve"
            note = "relative to a directory descriptor on %s" % base
        elif _leaves(text):
            return None, "leaves the working directory"
    real, _ = _resolve(text, base)
    return (real, note) if real is not None else (None, "too many symbolic links")


def _paths_flagged(event, args, table, allowed, cwd):
    """A file-system change or a listing: flagged when a path it names is outside `allowed`."""
    positions = table.get(event)
    if positions is None:
        positions = tuple((i, None) for i, a in enumerate(args) if _path_text(a) is not None) or ((0, None),)
    note = None
    for position, dir_position in positions:
        value = args[position] if position < len(args) else None
        if value is None:
            if event in LISTINGS:
                value = "."  # os.listdir() and os.scandir() list the working directory
            else:
                continue
        dir_fd = args[dir_position] if dir_position is not None and dir_position < len(args) else None
        real, why = _judge_path(value, dir_fd, cwd)
        if why is not None:
            note = why
        if real is None or not _inside(real, allowed):
            return True, note
    return False, note


def _trust_code(code, trusted):
    """A code object and every one nested in it (its functions, classes, lambdas), by identity."""
    todo = [code]
    while todo:
        current = todo.pop()
        if trusted.get(_key(current)) is current:
            continue
        trusted[_key(current)] = current
        for const in current.co_consts:
            if type(const) is CODE_TYPE:
                todo.append(const)


def _library_codes():
    """The code of every module loaded before the plugin starts (the interpreter's start-up, the
    runner's own imports), but the runner's and zipimport's: found now, before the hook is
    installed, so none of it is the plugin's."""
    trusted = {}
    seen = set()

    def walk(value, depth):
        if _key(value) in seen or depth > 3:
            return
        seen.add(_key(value))
        kind = type(value)
        if kind is types.FunctionType:
            _trust_code(value.__code__, trusted)
        elif kind in (staticmethod, classmethod):
            walk(value.__func__, depth)
        elif kind is property:
            for accessor in (value.fget, value.fset, value.fdel):
                walk(accessor, depth)
        elif isinstance(value, type):
            for member in list(vars(value).values()):
                walk(member, depth + 1)

    for name, module in list(sys.modules.items()):
        if name in UNTRUSTED_MODULES or type(module) is not types.ModuleType:
            continue
        for value in list(vars(module).values()):
            walk(value, 0)
    return trusted


def _machinery_snapshot():
    """The import machinery's modules and loader classes as they are before the plugin runs."""
    live = [vars(m) for m in (_BOOTSTRAP, _EXTERNAL, sys.modules["_io"], sys.modules["marshal"], sys.modules["_imp"])]
    live += [
        _type_dict(kind)
        for kind in (
            _EXTERNAL._LoaderBasics,
            _EXTERNAL.FileLoader,
            _EXTERNAL.SourceLoader,
            _EXTERNAL.SourceFileLoader,
            _EXTERNAL.SourcelessFileLoader,
            _BOOTSTRAP.FrozenImporter,
            _BOOTSTRAP.ModuleSpec,
        )
    ]
    return [(mapping, {k: v for k, v in mapping.items() if k not in RENAMED}) for mapping in live]


def _machinery_intact(machinery):
    for live, snapshot in machinery:
        count = 0
        for key, value in live.items():
            if type(key) is not str:
                return False
            if key in RENAMED:
                continue
            if snapshot.get(key, MISSING) is not value:
                return False
            count += 1
        if count != len(snapshot):
            return False
    return True


def _loader_verified(frame):
    """A loader method's frame: its loader is one of the machinery's own file loaders, untouched
    (only its name and path set), and every path it holds is under the interpreter's roots."""
    for name, value in dict.items(frame.f_locals):
        if name == "self":
            kind = type(value)
            if LOADER_TYPES.get(_key(kind)) is not kind:
                return False
            for key, item in dict.items(_loader_dict(value)):
                if type(key) is not str or key not in LOADER_ATTRIBUTES:
                    return False
                if key == "path":
                    path = _path_text(item)
                    real, mode = _resolve(path, "/") if path is not None else (None, None)
                    if real is None or mode is None or not _S_ISREG(mode) or not _inside(real, LIBRARY_ROOTS):
                        return False
        elif issubclass(type(value), str):
            path = _path_text(value)
            if path is not None and path.startswith("/") and not _inside(_resolve(path, "/")[0] or "", LIBRARY_ROOTS):
                return False
    return True


def _encode(message):
    """A flat message as JSON, made by hand: no code the plugin can reach (json's encoder is
    Python code whose module globals a plugin can replace)."""
    parts = []
    for key, value in message.items():
        if value is None:
            text = "null"
        elif value is True or value is False:
            text = "true" if value else "false"
        elif type(value) is int:
            text = repr(value)
        elif type(value) is list:
            text = "[%s]" % ", ".join(_json_string(item) for item in value)
        else:
            text = _json_string(value)
        parts.append("%s: %s" % (_json_string(key), text))
    return "{%s}" % ", ".join(parts)


def _recorder(token, channel, trusted, machinery):
    """The audit hook and what the runner sends with it, over private state: nothing here is
    reachable from any module, and every lookup is in the runner's own namespace."""
    busy = set()  # threads now inside the runner's own code: their events are re-entries
    expected = {}  # thread -> (event, object): the runner's own next audited step, by identity
    pending = []  # re-entries, sent by the runner's next step out
    counts = {"recorded": 0, "dropped": 0}
    state = {"recording": False, "machinery_changed": False, "directories": False}
    lock = _allocate_lock()
    prefix = token + " "

    def emit(event, shown, flagged):
        """One event out, within the bound: past MAX_EVENTS only flagged ones, up to as many again."""
        with lock:
            if counts["recorded"] >= MAX_EVENTS and (not flagged or counts["recorded"] >= 2 * MAX_EVENTS):
                counts["dropped"] += 1
                return
            counts["recorded"] += 1
            write(_encode({"kind": "event", "event": event, "args": shown, "flagged": bool(flagged)}))

    def write(text):
        # Under the lock (emit, result): the lines of two threads never interleave.
        data = (prefix + text + "\n").encode("ascii")
        while data:
            data = data[_write(channel, data) :]

    def drain():
        while pending:
            event, shown = pending.pop(0)
            emit("runner.reentered", [_printable(event)] + shown, True)

    def audited(obj, getter):
        """A read CPython audits (a frame's f_code, a traceback's tb_frame) made by the runner:
        its event is known by the object's identity, and not recorded."""
        ident = _get_ident()
        expected[ident] = ("object.__getattr__", obj)
        try:
            return getter(obj)
        finally:
            expected.pop(ident, None)

    def library_lines(filename):
        """The lines of a file under the interpreter's roots (a traceback's library frames), read
        with an open the runner knows by its path object's identity."""
        path = _text(filename)
        real, mode = _resolve(path, "/") if path is not None and path.startswith("/") else (None, None)
        if real is None or mode is None or not _S_ISREG(mode) or not _inside(real, LIBRARY_ROOTS):
            return []
        ident = _get_ident()
        expected[ident] = ("open", real)
        try:
            with _io_open(real, "rb") as source_file:
                data = source_file.read(MAX_SOURCE_BYTES)
        except OSError:
            return []
        finally:
            expected.pop(ident, None)
        return data.decode("utf-8", "replace").splitlines()

    def own(ident, event, args):
        step = expected.get(ident)
        if step is not None and step[0] == event and (args[0] is step[1] if args else step[1] is None):
            expected.pop(ident, None)
            return True
        return False

    def hook(event, args):
        ident = _get_ident()
        if ident in busy:
            if not own(ident, event, args):
                try:
                    shown = _arguments(event, args)
                except Exception:
                    shown = ["<unprintable>"]
                pending.append((event, shown))
                if event == "sys.addaudithook":
                    raise RuntimeError(REFUSED)
            return
        if not state["recording"] or own(ident, event, args):
            return
        busy.add(ident)
        try:
            origin = None
            if event in FRAME_EVENTS:
                try:
                    raise _Here
                except _Here as here:
                    trace = _exception_traceback(here)
                origin = audited(trace, _tb_frame).f_back
                trace = None
            flagged, note = judge(event, args, origin)
            shown = _arguments(event, args)
            if note is not None:
                shown.append(_printable("runner: " + note))
            emit(event, shown, flagged)
            drain()
        except Exception as error:  # never let the recording change what the plugin sees
            try:
                emit("runner.error", [_printable(event), _type_name(type(error))], True)
            except Exception:
                pass
        finally:
            busy.discard(ident)
        if event == "sys.addaudithook":
            # A hook of the plugin's would be handed the runner's own audited reads (its frames):
            # CPython drops a new hook, silently, when an existing one raises a RuntimeError.
            raise RuntimeError(REFUSED)

    def loaded_by_machinery(frame):
        """True when `frame` runs library code the real import machinery is loading: from it up
        to the machinery's _load_unlocked, only library code, the machinery unchanged, and each
        loader one of its own file loaders on a file under the interpreter's roots."""
        loaders = []
        for _ in range(256):
            if frame is None:
                return False
            code = audited(frame, _frame_code)
            if trusted.get(_key(code)) is not code:
                return False
            if code is LOAD_UNLOCKED:
                break
            if LOADER_METHODS.get(_key(code)) is code:
                loaders.append(frame)
            frame = frame.f_back
        else:
            return False
        if not _machinery_intact(machinery):
            if not state["machinery_changed"]:
                state["machinery_changed"] = True
                emit("runner.import-machinery-changed", [], True)
            return False
        return all(_loader_verified(f) for f in loaders)

    def directories_outside(cwd):
        """The directories outside the working directory that a descriptor of this process is
        open on, as the kernel says: os.readlink of /proc/self/fd/N, N upward until DESCRIPTOR_GAP
        numbers in a row are closed (readlink and stat raise no audit event, and the tracer
        outside does not trace them; listing the directory would be an open it flags). Looked at
        only once the plugin opened a directory outside the working directory."""
        if not state["directories"]:
            return []
        found, fd, gap = [], 0, 0
        while gap < DESCRIPTOR_GAP and fd < MAX_DESCRIPTORS:
            entry = FD_DIR + "/" + str(fd)
            fd += 1
            try:
                target = _readlink(entry)
            except OSError:
                gap += 1
                continue
            gap = 0
            if not target.startswith("/") or target == cwd or _inside(target, (WORK_DIR,)):
                continue
            try:
                if _S_ISDIR(_tuple_item(_stat(entry), 0)):
                    found.append(target)
            except (OSError, ValueError):
                pass
        return found

    def judge_open(args):
        path, mode, flags = (list(args) + [None, None, None])[:3]
        writes = _file_writes(mode, flags)
        if _number(path) is not None:  # a descriptor: os.fdopen and the like
            return writes, None
        text = _path_text(path)
        if text is None:
            return True, "a path object the runner does not read (its __fspath__ is the plugin's)"
        cwd = _getcwd()
        flagged, note = False, None
        if not text.startswith("/"):
            # The open event does not say which directory descriptor (dir_fd) a relative path is
            # relative to: with one open outside the working directory, the runner cannot tell.
            others = directories_outside(cwd)
            if others:
                flagged, note = True, "relative, while a directory descriptor is open on %s" % ", ".join(others[:4])
            elif _leaves(text):
                flagged, note = True, "leaves the working directory"
        real, real_mode = _resolve(text, cwd)
        if real is None:
            return True, "too many symbolic links"
        if real_mode is not None and _S_ISDIR(real_mode) and not _inside(real, (WORK_DIR,)):
            state["directories"] = True
        number = _number(flags)
        if number is not None and number & _O_DIRECTORY and not _inside(real, (WORK_DIR,)):
            state["directories"] = True
        if writes:
            flagged = flagged or real.endswith(CODE_SUFFIXES) or not _inside(real, (WORK_DIR,))
        else:
            flagged = flagged or not _inside(real, (WORK_DIR,) + QUIET_READ_ROOTS)
        return flagged, note

    def judge(event, args, origin):
        """What a reviewer must look at: (flagged, a note the runner adds to the arguments)."""
        if event in IMPORT_TIME_QUIET and origin is not None and loaded_by_machinery(origin):
            if event == "exec" and args and type(args[0]) is CODE_TYPE:
                _trust_code(args[0], trusted)
            return False, None
        if event == "import":
            name = _text(args[0]) if args else None
            if name is None:
                return True, None
            if name in BELOW_AUDITS or name.partition(".")[0] in BELOW_AUDITS:
                return not (origin is not None and loaded_by_machinery(origin)), None
            return False, None
        if event == "owtf.command":
            # The stand-in framework's CommandDump or RunCommand (owtf_stand_in.py): flagged when the
            # plugin supplied a command of its own, which the framework would run in a shell.
            return len(args) < 3 or args[2] is not False, None
        if event == "sys.addaudithook":
            return True, "refused: no other audit hook is added"
        if event in SPAWNS or event in NETWORK or event in INTROSPECTION:
            return True, None
        if event.startswith("ctypes.") or event.startswith("os.exec") or event.startswith("winreg."):
            return True, None
        if event == "open":
            return judge_open(args)
        if event in FS_CHANGES:
            return _paths_flagged(event, args, FS_CHANGES, (WORK_DIR,), _getcwd())
        if event in LISTINGS:
            return _paths_flagged(event, args, LISTINGS, (WORK_DIR,) + QUIET_READ_ROOTS, _getcwd())
        if event == "os.chdir":
            return _paths_flagged(event, args, {}, (WORK_DIR,), _getcwd())
        if event == "compile":
            return True, None
        if event == "exec":
            code = args[0] if args else None
            return not (type(code) is CODE_TYPE and trusted.get(_key(code)) is code), None
        if event in ("object.__setattr__", "object.__delattr__"):
            target = args[0] if args else None
            name = _text(args[1]) if len(args) > 1 else None
            static_type = issubclass(type(target), type) and not _type_flags(target) & HEAP_TYPE
            return static_type or name in SENSITIVE_SET_NAMES, None
        return False, None

    def enter_runner():
        """From here on this thread runs the runner's code: what plugin code it sets off is a
        re-entry; a trace or profile function the plugin set (flagged when it did) is removed."""
        ident = _get_ident()
        busy.add(ident)
        for current, replace, event in ((_gettrace, _settrace, "sys.settrace"), (_getprofile, _setprofile, "sys.setprofile")):
            if current() is not None:
                expected[ident] = (event, None)
                try:
                    replace(None)
                finally:
                    expected.pop(ident, None)

    def start():
        state["recording"] = True

    def expect(event, obj):
        expected[_get_ident()] = (event, obj)

    def runner_event(event, shown, flagged=True):
        emit(event, shown, flagged)

    def result(message):
        drain()
        message.update(kind="result", events_dropped=counts["dropped"])
        with lock:
            write(_encode(message))
        state["recording"] = False

    return types.SimpleNamespace(
        hook=hook,
        audited=audited,
        library_lines=library_lines,
        enter_runner=enter_runner,
        start=start,
        expect=expect,
        runner_event=runner_event,
        drain=drain,
        result=result,
    )


def _source_findings(source):
    """What the plugin's source says it will do that CPython does not audit: name an attribute
    that leads from any object to any other (__globals__, f_back, ...), in code or in a string
    (operator.attrgetter("f_locals"), "{0.gi_frame}".format), reach attributes by a computed
    name (getattr(x, name), getattr passed on as a value, vars), import by a computed name, or
    import a module that reaches below the audits. [(kind, name, line)], in source order."""
    # The builtin _ast through compile(): the ast module's imports (enum, re...) cost a run 8 ms.
    try:
        tree = compile(source, PLUGIN_PATH, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []  # the plugin's own compile reports it
    findings = []
    literal_calls = set()  # the callee nodes of getattr(x, "name") and the like: harmless

    def add(node, kind, name):
        findings.append(((getattr(node, "lineno", 0), getattr(node, "col_offset", 0)), kind, name))

    todo = [tree]
    while todo:
        node = todo.pop()  # a node comes out before its children (a call before its callee)
        for field in node._fields:
            child = getattr(node, field, None)
            todo.extend(c for c in (child if isinstance(child, list) else [child]) if isinstance(c, _ast.AST))
        if isinstance(node, _ast.Call):
            callee = node.func
            name = callee.id if isinstance(callee, _ast.Name) else getattr(callee, "attr", None)
            index = DYNAMIC_CALLS.get(name)
            args = node.args
            if index is not None and index < len(args) and isinstance(args[index], _ast.Constant):
                if isinstance(args[index].value, str):
                    literal_calls.add(_key(callee))
        elif isinstance(node, (_ast.Name, _ast.Attribute)):
            name = node.id if isinstance(node, _ast.Name) else node.attr
            if name in SOURCE_ATTRIBUTES or name in SOURCE_NAMES:
                add(node, "attribute" if isinstance(node, _ast.Attribute) else "name", name)
            elif name in DYNAMIC_CALLS and _key(node) not in literal_calls:
                add(node, "dynamic import" if name in DYNAMIC_IMPORTS else "dynamic attribute", name)
        elif isinstance(node, _ast.Constant) and isinstance(node.value, str):
            text = node.value
            for name in IDENTIFIER.findall(text) if "_" in text else ():
                if name in SOURCE_ATTRIBUTES:
                    add(node, "string", name)
            if text in BELOW_AUDITS or text.partition(".")[0] in BELOW_AUDITS:
                add(node, "string", text)
        elif isinstance(node, (_ast.Import, _ast.ImportFrom)):
            module = getattr(node, "module", None) or ""
            for alias in node.names:
                name = alias.name if isinstance(node, _ast.Import) else module
                if name in BELOW_AUDITS or name.partition(".")[0] in BELOW_AUDITS:
                    add(node, "module", name)
                elif isinstance(node, _ast.ImportFrom) and alias.name in DYNAMIC_CALLS and alias.asname:
                    add(node, "dynamic attribute", alias.name)  # getattr under another name
    findings.sort(key=lambda finding: finding[0])
    return [(kind, name, where[0]) for where, kind, name in findings]


def _limit_of(error):
    kind = type(error)
    if issubclass(kind, MemoryError):
        return "address-space"
    if issubclass(kind, OSError):
        number = _number(_os_error["errno"](error))
        if number == _EFBIG:
            return "file-size"
        if number == _EAGAIN:
            return "processes"
    return None


def _exception_name(kind):
    """`module.Qualname` as Python prints it (no module for builtins), read without the class's code."""
    name = _type_name(kind)
    if not _type_flags(kind) & HEAP_TYPE:
        module = _text(_type_module(kind))
    else:
        module = None
        for key, value in _type_dict(kind).items():
            if type(key) is str and key == "__module__":
                module = _text(value)
    return name if module in (None, "builtins", "__main__") else "%s.%s" % (module, name)


def _exception_message(error):
    """What str(error) says for the builtin exceptions, from their arguments alone: an argument
    that is not a builtin value shows as <TypeName>, and the exception's own __str__ never runs."""
    kind = type(error)
    args = _exception_args(error)
    if issubclass(kind, OSError):
        number, reason = _number(_os_error["errno"](error)), _text(_os_error["strerror"](error))
        if number is not None and reason is not None:
            message = "[Errno %d] %s" % (number, reason)
            filename, filename2 = _os_error["filename"](error), _os_error["filename2"](error)
            if filename is not None:
                message += ": " + _printable(filename, limit=MAX_TEXT_CHARS)
            if filename2 is not None:
                message += " -> " + _printable(filename2, limit=MAX_TEXT_CHARS)
            return message
    if issubclass(kind, SyntaxError):
        message = _text(_syntax_error["msg"](error))
        if message is not None:
            return message
    if issubclass(kind, KeyError) and len(args) == 1:
        return _printable(args[0], limit=MAX_TEXT_CHARS)
    if not args:
        return ""
    if len(args) == 1:
        text = _text(args[0])
        return text[:MAX_TEXT_CHARS] if text is not None else _printable(args[0], limit=MAX_TEXT_CHARS)
    return _printable(args, limit=MAX_TEXT_CHARS)


def _formatted_exception(error, audited, plugin_lines, library_lines):
    """The traceback as Python prints it, made without the plugin's code: frames read through
    the runner's own audited reads, source lines from the bytes it compiled (and the library's
    files), messages from the exceptions' arguments (_exception_message). The runner's own
    frames are left out."""
    sources = {PLUGIN_PATH: plugin_lines}
    chain = []
    current, link = error, None
    while current is not None and len(chain) < 8 and all(current is not seen for seen, _ in chain):
        chain.append((current, link))
        cause = _exception_cause(current)
        if cause is not None:
            current, link = cause, "\nThe above exception was the direct cause of the following exception:\n\n"
        elif not _exception_suppressed(current):
            current = _exception_context(current)
            link = "\nDuring handling of the above exception, another exception occurred:\n\n"
        else:
            current = None
    text = []
    for exception, link in reversed(chain):
        frames = []
        trace = _exception_traceback(exception)
        while trace is not None and len(frames) < 1000:
            code = audited(audited(trace, _tb_frame), _frame_code)
            filename, name, line = _text(code.co_filename) or "?", _text(code.co_name) or "?", _number(trace.tb_lineno)
            if not filename.startswith(RUNNER_DIR):
                shown = '  File "%s", line %s, in %s\n' % (filename, line, name)
                if filename not in sources and len(sources) < 64:
                    sources[filename] = library_lines(filename)
                lines = sources.get(filename, [])
                if line is not None and 0 < line <= len(lines):
                    shown += "    %s\n" % lines[line - 1].strip()
                frames.append(shown)
            trace = trace.tb_next
        if frames:
            text.append("Traceback (most recent call last):\n")
            text.extend(frames[-100:])
        if issubclass(type(exception), SyntaxError):
            filename, line = _text(_syntax_error["filename"](exception)), _number(_syntax_error["lineno"](exception))
            source, offset = _text(_syntax_error["text"](exception)), _number(_syntax_error["offset"](exception))
            if filename is not None:
                text.append('  File "%s", line %s\n' % (filename, line))
            if source is not None:
                stripped = source.strip()
                text.append("    %s\n" % stripped)
                if offset is not None:
                    caret = offset - 1 - (len(source) - len(source.lstrip()))
                    text.append("    %s^\n" % (" " * max(0, min(caret, len(stripped)))))
        message = _exception_message(exception)
        name = _exception_name(type(exception))
        text.append("%s: %s\n" % (name, message) if message else "%s\n" % name)
        if link is not None:
            text.append(link)
    return "".join(text)


def _quiet_signals():
    """No handler of the plugin's runs during the runner's last steps, nor raises into them."""
    for number in range(1, _NSIG):
        try:
            if callable(_getsignal(number)):
                _setsignal(number, _SIG_IGN)
        except (OSError, ValueError, RuntimeError):
            pass


def _changed(before, mapping, names=None):
    """The names of `mapping` (a module's namespace) bound to other objects than in `before`,
    read by iteration alone (a key the plugin put in is never hashed or compared: its __hash__
    and __eq__ would run). (changed names, the current values of `names`)."""
    changed, current = [], {}
    for name, value in dict.items(mapping):
        if type(name) is not str:
            changed.append("<%s>" % _type_name(type(name)))
        elif names is None or name in names:
            current[name] = value
            if before.get(name, MISSING) is not value:
                changed.append(name)
    changed += ["-" + name for name in before if name not in current]
    return changed, current


def _read_token():
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(0, 256)
        if not chunk:
            break
        data += chunk
    return data.decode("ascii").strip()


def main():
    # The token read straight from the descriptor (no buffer of sys.stdin keeps it).
    token = _read_token()
    # The plugin reads no token from stdin, and finds the channel under no number it was given.
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    soft_files, hard_files = resource.getrlimit(resource.RLIMIT_NOFILE)
    channel = random.SystemRandom().randrange(64, max(65, min(soft_files, 1024)))
    os.dup2(CHANNEL_FD, channel)
    # Every other descriptor the jail was started with (whatever the server's process inherited)
    # is closed: the plugin gets 0, 1, 2 and the channel, nothing else.
    os.closerange(3, channel)
    os.closerange(channel + 1, hard_files if 0 < hard_files < 1 << 20 else 1 << 20)
    runner_pid = os.getpid()

    cpu = SETTINGS["cpu_seconds"]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (SETTINGS["address_space_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (SETTINGS["file_size_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NPROC, (SETTINGS["processes"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    with open(PLUGIN_PATH, "rb") as plugin_file:
        source = plugin_file.read()
    plugin_lines = source.decode("utf-8", "replace").splitlines()
    _install_stand_in()
    os.chdir(WORK_DIR)
    findings = _source_findings(source)
    builtins_dict, sys_dict = vars(builtins), vars(sys)
    before_builtins = dict(builtins_dict)
    sys_names = frozenset(("path", "meta_path", "path_hooks", "excepthook", "displayhook", "modules", "stdout", "stderr"))
    before_sys = {name: sys_dict[name] for name in sys_names}
    before_sys_lists = {name: list(sys_dict[name]) for name in ("path", "meta_path", "path_hooks")}
    stdout, stderr = sys.stdout, sys.stderr
    trusted = _library_codes()
    machinery = _machinery_snapshot()
    # `import __main__` leads the plugin to a clean module, not to the runner.
    sys.modules["__main__"] = types.ModuleType("__main__")

    recorder = _recorder(token, channel, trusted, machinery)
    token = None
    sys.addaudithook(recorder.hook)
    return_value = None
    exception = None
    limit = None
    kept = []  # the plugin's objects stay alive until the process ends: no __del__ of theirs runs in the runner
    try:
        code = compile(source, PLUGIN_PATH, "exec", dont_inherit=True)
        module = types.ModuleType("plugin")
        module.__file__ = PLUGIN_PATH
        # The real builtins: exec would hand the plugin this function's own, the runner's copy.
        module.__builtins__ = builtins
        sys.modules["plugin"] = module
        kept.append(module)
        # Sent before the plugin's code runs: it cannot take them back.
        for kind, name, line in findings[:MAX_SOURCE_FINDINGS]:
            recorder.runner_event("runner.source-introspection", [_printable(kind), _printable(name), _printable(line)])
        if len(findings) > MAX_SOURCE_FINDINGS:
            recorder.runner_event("runner.source-introspection", ["'more'", _printable(len(findings) - MAX_SOURCE_FINDINGS), "0"])
        try:
            os.close(os.open(PLUGIN_STARTS, os.O_RDONLY))
        except OSError:
            pass
        recorder.expect("exec", code)  # the runner's own exec of the plugin's module code
        recorder.start()
        exec(code, module.__dict__)
        run = module.__dict__.get("run")
        if not callable(run):
            exception = "The plugin defines no run(PluginInfo)"
        else:
            value = run(_plugin_info())
            kept.append(value)
            return_value = _printable_result(value)
    except BaseException as error:  # SystemExit and KeyboardInterrupt are the plugin's too
        # What follows is the runner's: plugin code it sets off is recorded as a re-entry.
        recorder.enter_runner()
        kept.append(error)
        limit = _limit_of(error)
        try:
            exception = _formatted_exception(error, recorder.audited, plugin_lines, recorder.library_lines)
            exception = exception[-MAX_TEXT_CHARS:]
        except Exception as failure:
            exception = "%s (the runner could not format it: %s)" % (
                _exception_name(type(error)),
                _exception_name(type(failure)),
            )
    # Whatever happens in the runner's last steps (the plugin may have closed the channel),
    # the process ends here: no excepthook, atexit handler or thread join of the plugin's runs.
    try:
        recorder.enter_runner()
        _quiet_signals()
        _gc_disable()
        if _getpid() != runner_pid:  # a child the plugin forked: the runner alone reports
            _exit(0)
        # The plugin's output, flushed through the objects and the method saved before it ran (a
        # flush it put on sys.stdout is not called; what runs under them is recorded as a re-entry).
        for stream in (stdout, stderr):
            try:
                _text_flush(stream)
            except Exception:
                pass
        changed, _ = _changed(before_builtins, builtins_dict)
        if changed:
            recorder.runner_event("runner.builtins-changed", [_printable(changed)])
        sys_changed, current_sys = _changed(before_sys, sys_dict, sys_names)
        for name, items in before_sys_lists.items():
            current = current_sys.get(name)
            if type(current) is not list or len(current) != len(items) or any(a is not b for a, b in zip(current, items)):
                sys_changed.append(name)
        if sys_changed:
            recorder.runner_event("runner.sys-changed", [_printable(sorted(set(sys_changed)))])
        recorder.result(
            {
                "return_value": return_value,
                "exception": exception,
                # The CPU limit is named by the server, from the signal that ended the process.
                "limit": limit,
            }
        )
    finally:
        _exit(0)


def _install_stand_in():
    """The framework's `owtf` package as stand-ins (owtf_stand_in.py), installed before recording starts."""
    with open(STAND_IN_PATH, "rb") as stand_in_file:
        stand_in_source = stand_in_file.read()
    stand_in = types.ModuleType("_owtf_stand_in")
    stand_in.__file__ = STAND_IN_PATH
    stand_in.__builtins__ = builtins  # not the runner's copy (the plugin can reach the stand-in's functions)
    exec(compile(stand_in_source, STAND_IN_PATH, "exec", dont_inherit=True), stand_in.__dict__)
    stand_in.install()


def _printable_result(value):
    # The return value is the plugin's object: its repr runs its code, recorded like the rest.
    try:
        text = _str_copy(repr(value))
    except BaseException as error:
        text = "<repr failed: %s>" % _type_name(type(error))
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


def _sealed():
    """The runner's own namespace: a copy of this module's, with a copy of the builtins, in which
    every function of the runner is re-made. From here on the runner's code looks its globals
    and builtins up only there; a plugin that replaces a name of this module or of `builtins`
    changes nothing the runner does."""
    module_globals = globals()
    private = dict(module_globals)
    private["__builtins__"] = dict(vars(builtins))
    for name, value in module_globals.items():
        if type(value) is types.FunctionType and value.__globals__ is module_globals:
            copy = types.FunctionType(value.__code__, private, value.__name__, value.__defaults__, value.__closure__)
            copy.__kwdefaults__ = value.__kwdefaults__
            copy.__qualname__ = value.__qualname__
            private[name] = copy
    return private


if __name__ == "__main__":
    _sealed()["main"]()
