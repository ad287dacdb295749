"""A stand-in for the framework's `owtf` package, inside the test-run jail.

Framework plugins start with `from owtf.plugin.helper import plugin_helper` and the like; in the
jail there is no framework, so without this they stop at ImportError before their payload runs.
The runner installs `install()`'s finder first on sys.meta_path (before it starts recording):
`owtf` and every `owtf.*` module then import as stand-ins whose attributes are permissive
stand-in objects, so `run(PluginInfo)` goes on past the framework calls and what the plugin does
after them shows in the report. The imports are still recorded (CPython audits them before any
finder runs).

The stand-ins hold no reference to the runner, do nothing the audit hooks see (no open, no
exec, no compile), and answer a few framework helpers with the types plugins build on:
`plugin_helper.<any>(...)` a list of one output dict (as the framework's helpers return),
`get_resources(...)` a list of (name, value) pairs, `get_val(...)` a string,
`plugin_params.get_args(...)` one set of arguments. Generic, not per plugin.

The framework runs the commands given to `plugin_helper.CommandDump` (its resource list's
(name, command) pairs) and `RunCommand` in a shell: the stand-in runs none, and raises the audit
event `owtf.command` (helper, commands, whether the plugin supplied one itself) for the runner to
record. A command the plugin supplied (anything but the stand-in's own resource text, which in
the framework is its configured resource) is what a reviewer must look at.
"""

import importlib.machinery
import sys
import types

PREFIX = "owtf"
TEXT = "owtf-stand-in"
MAX_NAME = 80


def _is_dunder(name):
    return name.startswith("__") and name.endswith("__")


class Text(str):
    """A string from the framework (a setting, a URL): a str, and its unknown attributes are stand-ins."""

    def __getattr__(self, name):
        if _is_dunder(name):
            raise AttributeError(name)
        return StandIn("%s.%s" % (TEXT, name))

    def __int__(self):
        return 0

    def __float__(self):
        return 0.0


# The helpers that run commands in the framework: where their command (or resource list) is.
COMMAND_HELPERS = {"CommandDump": (2, "ResourceList", True), "RunCommand": (0, "Command", False)}
MAX_COMMANDS = 32


def _framework_text(value):
    return type(value) is Text and str.__eq__(value, TEXT)


def _shown(value):
    return str.__str__(value) if isinstance(value, str) else "<%s>" % type(value).__name__


def _audit_commands(kind, args, kwargs):
    position, keyword, is_list = COMMAND_HELPERS[kind]
    value = args[position] if len(args) > position else kwargs.get(keyword)
    entries = []
    if is_list:
        try:
            for entry in value:
                if len(entries) >= MAX_COMMANDS:
                    break
                if isinstance(entry, (tuple, list)) and len(entry) >= 2:
                    entries.append(entry[1])
                else:
                    entries.append(entry)
        except TypeError:
            entries.append(value)
    else:
        entries.append(value)
    supplied = any(not _framework_text(entry) for entry in entries)
    sys.audit("owtf.command", kind, [_shown(entry) for entry in entries], supplied)


def _output(kind):
    def helper(*args, **kwargs):
        if kind in COMMAND_HELPERS:
            _audit_commands(kind, args, kwargs)
        return [{"type": kind, "output": {}}]

    helper.__name__ = kind
    return helper


def _resources(*args, **kwargs):
    return [(Text(TEXT), Text(TEXT))]


def _value(*args, **kwargs):
    return Text(TEXT)


def _arguments(args=None, *rest, **kwargs):
    """One set of arguments: every mandatory and optional name the plugin declares, as text."""
    chosen = {}
    if isinstance(args, dict):
        for group in ("Mandatory", "Optional"):
            names = args.get(group)
            if isinstance(names, dict):
                for name in names:
                    chosen[name] = Text(TEXT)
    return [chosen]


def _special(path, name):
    """The framework's helpers whose answers plugins build on, by their generic names."""
    if path.endswith("plugin_helper"):
        return _output(name)
    if name == "get_resources":
        return _resources
    if name == "get_val":
        return _value
    if name == "get_args" and path.endswith("plugin_params"):
        return _arguments
    return None


class StandIn(object):
    """Anything the framework would hand a plugin: callable, chainable, iterable (empty), truthy."""

    __slots__ = ("_stand_in_path",)

    def __init__(self, path):
        object.__setattr__(self, "_stand_in_path", path[:MAX_NAME])

    def __getattr__(self, name):
        if _is_dunder(name):
            raise AttributeError(name)
        path = object.__getattribute__(self, "_stand_in_path")
        special = _special(path, name)
        return special if special is not None else StandIn("%s.%s" % (path, name))

    def __setattr__(self, name, value):
        pass

    def __delattr__(self, name):
        pass

    def __call__(self, *args, **kwargs):
        return StandIn(object.__getattribute__(self, "_stand_in_path") + "()")

    def __str__(self):
        return "<%s>" % object.__getattribute__(self, "_stand_in_path")

    __repr__ = __str__

    def __format__(self, spec):
        return format(str(self), spec)

    def __bool__(self):
        return True

    def __len__(self):
        return 0

    def __iter__(self):
        return iter(())

    def __contains__(self, item):
        return False

    def __getitem__(self, key):
        return StandIn(object.__getattribute__(self, "_stand_in_path") + "[]")

    def __setitem__(self, key, value):
        pass

    def __delitem__(self, key):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __hash__(self):
        return id(self)

    def __lt__(self, other):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __int__(self):
        return 0

    __index__ = __int__

    def __float__(self):
        return 0.0

    def __add__(self, other):
        if isinstance(other, str):
            return str(self) + other
        if isinstance(other, (list, tuple)):
            return type(other)() + other
        return self

    def __radd__(self, other):
        if isinstance(other, str):
            return other + str(self)
        if isinstance(other, (list, tuple)):
            return other + type(other)()
        return self

    def _same(self, *other):
        return self

    __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = _same
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _same
    __neg__ = __pos__ = __abs__ = __invert__ = _same


class _Module(types.ModuleType):
    def __getattr__(self, name):
        if _is_dunder(name):
            raise AttributeError(name)
        special = _special(self.__name__, name)
        return special if special is not None else StandIn("%s.%s" % (self.__name__, name))


class _Loader(object):
    def create_module(self, spec):
        module = _Module(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


class _Finder(object):
    def __init__(self):
        self._loader = _Loader()

    def find_spec(self, name, path=None, target=None):
        if name != PREFIX and not name.startswith(PREFIX + "."):
            return None
        return importlib.machinery.ModuleSpec(name, self._loader, is_package=True)

    def invalidate_caches(self):
        pass


def install():
    """Puts the stand-in's finder first on sys.meta_path; the caller does it before recording starts."""
    sys.meta_path.insert(0, _Finder())
