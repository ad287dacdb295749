import { closeSharedValidator, validate } from './validator';
import type { ValidationResult } from './types';

const HEADER = 'DESCRIPTION = "Test plugin"\n\n';

/** A valid plugin whose run() body is `body`; `prelude` goes before everything. */
function plugin(body: string, prelude = ''): string {
  const indented = body
    .split('\n')
    .map((line) => (line ? `    ${line}` : line))
    .join('\n');
  return `${prelude}${HEADER}def run(PluginInfo):\n${indented}\n`;
}

const check = (source: string): Promise<ValidationResult> => validate(Buffer.from(source, 'utf8'));

async function rulesOf(source: string): Promise<string[]> {
  return (await check(source)).violations.map((violation) => violation.rule);
}

afterAll(() => closeSharedValidator());

describe('validate', () => {
  it('accepts a minimal plugin', async () => {
    await expect(check(plugin('return None'))).resolves.toEqual({ ok: true, violations: [] });
  });

  describe('reports exact positions and messages', () => {
    it('for a forbidden import', async () => {
      await expect(check(plugin('return 1', 'import json, os.path\n'))).resolves.toEqual({
        ok: false,
        violations: [
          {
            rule: 'forbidden-import',
            message: "Import of forbidden module 'os.path'",
            line: 1,
            column: 14,
          },
        ],
      });
    });

    it('for several findings, sorted by line and column', async () => {
      const source = plugin('x = eval(PluginInfo)\ny = ().__class__\nreturn open("f", "w")');
      await expect(check(source)).resolves.toEqual({
        ok: false,
        violations: [
          { rule: 'forbidden-name', message: "Use of forbidden name 'eval'", line: 4, column: 9 },
          {
            rule: 'dunder-access',
            message: "Access to dunder name '__class__' is not allowed",
            line: 5,
            column: 12,
          },
          {
            rule: 'open-write',
            message: "open() must use a literal read mode ('r', 'rb' or 'rt')",
            line: 6,
            column: 12,
          },
        ],
      });
    });

    it('in code points, not UTF-16 units, after non-ASCII text', async () => {
      const { violations } = await check(plugin('x = "é😀"; eval(1)'));
      expect(violations).toEqual([
        { rule: 'forbidden-name', message: "Use of forbidden name 'eval'", line: 4, column: 15 },
      ]);
    });

    it('with line numbers that count a lone CR as a line break, as Python does', async () => {
      const { violations } = await check(`# note\rimport os\r${HEADER}def run(PluginInfo):\r    return 1\r`);
      expect(violations).toEqual([
        { rule: 'forbidden-import', message: "Import of forbidden module 'os'", line: 2, column: 8 },
      ]);
    });

    it('for the module contract', async () => {
      await expect(check('x = 1\n')).resolves.toEqual({
        ok: false,
        violations: [
          {
            rule: 'missing-description',
            message: 'Plugin must define a top-level DESCRIPTION string',
            line: 1,
            column: 1,
          },
          {
            rule: 'missing-run',
            message: 'Plugin must define a top-level function run(PluginInfo) with one positional parameter',
            line: 1,
            column: 1,
          },
        ],
      });
    });
  });

  it('reports each finding once', async () => {
    const { violations } = await check(plugin('eval(1); eval(2)'));
    expect(violations.map(({ line, column }) => [line, column])).toEqual([
      [4, 5],
      [4, 14],
    ]);
  });

  describe('imports', () => {
    it.each([
      'import os',
      'import os.path as p',
      'from os import system as s',
      'from os.path import join',
      'import concurrent.futures',
      'from asyncio import subprocess',
      'import json, subprocess',
      'from importlib import import_module',
      'import ｏｓ',
    ])('rejects %j', async (statement) => {
      expect(await rulesOf(plugin('return 1', `${statement}\n`))).toContain('forbidden-import');
    });

    it.each([
      'from asyncio import sleep',
      'import json',
      'from xml.etree import ElementTree as ET',
      'from urllib import parse',
      'import urllib.parse',
      'from owtf.plugin.helper import plugin_helper',
    ])('accepts %j', async (statement) => {
      expect(await rulesOf(plugin('return 1', `${statement}\n`))).toEqual([]);
    });

    it.each([
      ['import osmosis', "Import of module 'osmosis' is not allowed"],
      ['import system_tools', "Import of module 'system_tools' is not allowed"],
      ['import antigravity', "Import of module 'antigravity' is not allowed"],
      ['from cgitb import pydoc', "Import of module 'cgitb' is not allowed"],
      ['import imaplib', "Import of module 'imaplib' is not allowed"],
      ['import tempfile', "Import of module 'tempfile' is not allowed"],
      ['from http import server', "Import of forbidden module 'http.server'"],
      ['import _operator', "Import of private module '_operator' is not allowed"],
      [
        'from _frozen_importlib import BuiltinImporter',
        "Import of private module '_frozen_importlib' is not allowed",
      ],
      ['import json._private', "Import of private module 'json._private' is not allowed"],
    ])('refuses %j: only modules on the allow-list may be imported', async (statement, message) => {
      const { violations } = await check(plugin('return 1', `${statement}\n`));
      expect(violations.map((violation) => [violation.rule, violation.message])).toEqual([
        ['forbidden-import', message],
      ]);
    });

    it.each([
      'class Probe:\n    def __init__(self):\n        self._seen = set()\n\n    @classmethod\n    def build(cls):\n        return cls._default()\n\n    @classmethod\n    def _default(cls):\n        return cls()\n',
      'from collections import namedtuple\nHit = namedtuple("Hit", "url code")\nx = Hit("u", 1)._replace(code=2)._asdict()\n',
      '_cache = {}\n_cache["a"] = 1\n',
    ])('accepts private names of its own: %j', async (prelude) => {
      expect(await rulesOf(plugin('return 1', `${prelude}\n`))).toEqual([]);
    });

    it.each([
      ['import uuid\n', 'uuid._get_command_stdout("id")'],
      ['import re\n', 're.Pattern._cache'],
      ['', 'PluginInfo._private'],
    ])('refuses private attributes of anything but self and cls: %j %j', async (prelude, body) => {
      expect(await rulesOf(plugin(`return ${body}`, prelude))).toEqual(['private-access']);
    });

    /** A class binding `_key`, with a method `same(self, other)` whose body is given. */
    const otherInstance = (body: string): string =>
      plugin(
        'return 1',
        `class Finding:\n    _key = None\n\n    def same(self, other):\n${body
          .split('\n')
          .map((line) => `        ${line}`)
          .join('\n')}\n\n`,
      );

    it.each([
      'return isinstance(other, Finding) and self._key == other._key',
      'if isinstance(other, Finding):\n    return other._key\nreturn None',
      'if not isinstance(other, Finding):\n    return NotImplemented\nreturn other._key',
      'return self._key < other._key',
      'return (self._key, 1) == (other._key, 1)',
      'new = Finding()\nnew._key = self._key\nreturn new',
    ])(
      "accepts another instance's private name once it is known to be one, or only compared: %j",
      async (body) => {
        expect(await rulesOf(otherInstance(body))).toEqual([]);
      },
    );

    it.each([
      // Any object's `_key` would be unlocked by the class binding the name.
      'return other._key()',
      'if isinstance(other, Finding):\n    pass\nreturn other._key()',
      'if not isinstance(other, Finding):\n    print(other)\nreturn other._key()',
      'return isinstance(other, Finding) or other._key()',
      'if isinstance(other, (Finding, int)):\n    return other._key()',
      'if isinstance(other, Finding):\n    other = PluginInfo\n    return other._key()',
      'return (other._key)() == 1',
      'return (k := other._key) == 1',
      'def inner():\n    return other._key()\nif isinstance(other, Finding):\n    return inner()',
    ])("refuses another object's private name unless isinstance has checked it: %j", async (body) => {
      expect(await rulesOf(otherInstance(body))).toContain('private-access');
    });

    it.each([
      // register() makes isinstance true of any class's objects; so does a plugin's own isinstance.
      'import abc\n\nclass Finding(abc.ABC):\n    _key = None\n\n    def same(self, other):\n        if isinstance(other, Finding):\n            return other._key()\n\nFinding.register(int)\n',
      'def isinstance(value, kind):\n    return True\n\nclass Finding:\n    _key = None\n\n    def same(self, other):\n        if isinstance(other, Finding):\n            return other._key()\n',
      // __new__ may return any object from Finding(...).
      'class Finding:\n    _key = None\n\n    def __new__(cls, other):\n        return other\n\n    def same(self, other):\n        new = Finding(other)\n        return new._key()\n',
    ])('refuses an instance check that any object could pass: %j', async (prelude) => {
      expect(await rulesOf(plugin('return 1', `${prelude}\n`))).toContain('private-access');
    });

    const trustingClass =
      'class Probe:\n    _seen = None\n\n    def seen(self):\n        return self._seen\n\n' +
      '    @classmethod\n    def build(cls):\n        return cls._make()\n\n' +
      '    @classmethod\n    def _make(cls):\n        return cls()\n\n' +
      '    @property\n    def value(self):\n        return self._seen\n\n' +
      '    @value.setter\n    def value(self, seen):\n        self._seen = seen\n\n';

    it('accepts a class whose methods use private names, reached through instances and as classmethods', async () => {
      expect(await rulesOf(plugin('probe = Probe.build()\nreturn probe.seen()', trustingClass))).toEqual([]);
      // Door 3: what a classmethod returns is not traced, so no attribute is stored on it.
      expect(
        await rulesOf(plugin('probe = Probe.build()\nprobe.value = 1\nreturn probe.seen()', trustingClass)),
      ).toEqual(['module-tampering']);
    });

    it('accepts a base class method called on self: Base.__init__(self), Base.seen(self)', async () => {
      const prelude = `${trustingClass}class Sub(Probe):\n    def __init__(self):\n        Probe.__init__(self)\n        Probe.seen(self)\n\n`;
      expect(await rulesOf(plugin('return Sub()', prelude))).toEqual([]);
    });

    it.each([
      ['Probe.seen(PluginInfo)', ''],
      ['return 1', 'class Sub(Probe):\n    def peek(self, other):\n        return Probe.seen(other)\n'],
      ['seen = Probe.seen\nreturn seen(PluginInfo)', ''],
      ['return list(map(Probe.seen, [PluginInfo]))', ''],
      ['return Probe.value.fget(PluginInfo)', ''],
      ['return Probe.other(PluginInfo)', '    other = seen\n'],
      ['return Probe.x', '    x = seen(None)\n'],
      ['return Sub.seen(PluginInfo)', 'class Sub(Probe):\n    pass\n'],
      [
        'return Sub11.seen(PluginInfo)',
        Array.from(
          { length: 11 },
          (_, i) => `class Sub${i + 1}(${i ? `Sub${i}` : 'Probe'}):\n    pass\n`,
        ).join(''),
      ],
    ])(
      'refuses a method that trusts self with private names reached through its class: %j %j',
      async (body, extra) => {
        const prelude = `${trustingClass}${extra}\n`; // extra: more class body, or a subclass
        expect(await rulesOf(plugin(body, prelude))).toContain('private-access');
      },
    );

    it.each([
      ['import logging\n', 'logging.os'],
      ['import json\n', 'json.decoder'],
      ['import enum\n', 'enum.bltns'],
      ['import string\n', 'string.sys'],
    ])(
      'refuses an attribute outside the generated API table of an allowed module: %j %j',
      async (prelude, body) => {
        const { violations } = await check(plugin(`return ${body}`, prelude));
        expect(violations.map((violation) => violation.rule)).toContain('module-attribute');
      },
    );

    it('allows the public API of an allowed module, and its allowed submodules', async () => {
      const prelude =
        'import json\nimport xml.etree.ElementTree\nimport urllib\nfrom collections import Counter\n';
      const body =
        'return json.loads("[]"), json.JSONDecodeError, xml.etree.ElementTree.fromstring("<a/>"), urllib.parse, Counter()';
      expect(await rulesOf(plugin(body, prelude))).toEqual([]);
    });

    it('refuses importing a name outside the table: from json import codecs', async () => {
      expect(await rulesOf(plugin('return 1', 'from json import codecs\n'))).toEqual(['module-attribute']);
    });

    it('refuses importing a private name from an allowed module', async () => {
      expect(await rulesOf(plugin('return 1', 'from uuid import _get_command_stdout\n'))).toEqual([
        'private-access',
      ]);
    });

    it('rejects star and relative imports with their own rules', async () => {
      expect(await rulesOf(plugin('return 1', 'from math import *\n'))).toEqual(['star-import']);
      expect(await rulesOf(plugin('return 1', 'from . import helpers\n'))).toEqual(['relative-import']);
      expect(await rulesOf(plugin('return 1', 'from .helpers import go\n'))).toEqual(['relative-import']);
    });

    it('allows from __future__ imports', async () => {
      expect(await rulesOf(plugin('return 1', 'from __future__ import annotations\n'))).toEqual([]);
    });
  });

  describe('forbidden names', () => {
    it.each([
      'eval("1")',
      'e = eval',
      'list(map(exec, []))',
      '[exec][0]("1")',
      'f = lambda: eval',
      'sorted([], key=compile)',
      'x = f"{exec(1)}"',
      'x = f"{1:{eval(1)}}"',
      'global eval',
      'if (e := vars): pass',
      'getattr(PluginInfo, "_x")',
      'getattr(PluginInfo, "gi_frame")',
      'getattr(PluginInfo, name)',
      'PluginInfo.exec("1")',
      'x = ｅｖａｌ',
      'def helper(x=breakpoint): pass',
    ])('rejects %j', async (statement) => {
      expect(await rulesOf(plugin(statement))).toContain('forbidden-name');
    });

    it('allows forbidden names as keyword-argument names', async () => {
      expect(await rulesOf(plugin('return dict(input=1, vars=2, compile=3)'))).toEqual([]);
    });

    it('allows ordinary methods that share a name with a builtin', async () => {
      expect(await rulesOf(plugin('return re.compile("x"), parser.input', 'import re\n'))).toEqual([]);
      expect(await rulesOf(plugin('return compile("x")', 'from re import compile\n'))).toEqual([]);
    });

    it('allows getattr, setattr and delattr with a plain literal that passes the attribute rules', async () => {
      expect(
        await rulesOf(
          plugin(
            'report = types.SimpleNamespace()\nsetattr(report, "seen", 1)\nreturn getattr(PluginInfo, "score", 0)',
            'import types\n',
          ),
        ),
      ).toEqual([]);
      // Door 3: the framework's PluginInfo (a parameter) is not the plugin's own object.
      expect(await rulesOf(plugin('setattr(PluginInfo, "seen", 1)'))).toEqual(['module-tampering']);
      expect(await rulesOf(plugin('setattr(json, "loads", 1)', 'import json\n'))).toContain('forbidden-name');
    });

    it('allows stores on a helper parameter only when every call passes a plugin object', async () => {
      const helper =
        'import dataclasses\n\n\nclass Report:\n    title = ""\n\n\ndef fill(report, title=None):\n    report.title = title\n\n\n';
      expect(await rulesOf(plugin('fill(Report(), "a")\nfill(report=Report())', helper))).toEqual([]);
      expect(
        await rulesOf(plugin('fill(Report())\nfill(dataclasses.fields(Report)[0], "x")', helper)),
      ).toEqual(['module-tampering']);
      expect(await rulesOf(plugin('fill(Report())\nreturn fill', helper))).toEqual(['module-tampering']);
      expect(await rulesOf(plugin('fill(*[Report()])', helper))).toEqual(['module-tampering']);
    });

    it('allows operator.attrgetter with literal names, as a sort key', async () => {
      const body = 'return sorted(PluginInfo, key=operator.attrgetter("score", "host.name"))';
      expect(await rulesOf(plugin(body, 'import operator\n'))).toEqual([]);
    });

    it('allows a parameter named help, and its uses inside its function, but not the builtin elsewhere', async () => {
      const prelude = 'def show(text, help=False):\n    return text if not help else text.upper()\n\n';
      expect(await rulesOf(plugin('return show("x")', prelude))).toEqual([]);
      expect(await rulesOf(plugin('return help()', prelude))).toEqual(['forbidden-name']);
      expect(await rulesOf(plugin('return 1', 'def show(help=help):\n    return help\n\n'))).toEqual([
        'forbidden-name',
      ]);
    });

    it('allows decoded bytes passed straight to a hash or len', async () => {
      const body =
        'return hashlib.sha256(base64.b64decode(PluginInfo)).hexdigest(), len(base64.b64decode(PluginInfo))';
      expect(await rulesOf(plugin(body, 'import base64\nimport hashlib\n'))).toEqual([]);
    });

    it('allows an attribute named fork: only os and pty fork, and they are not importable', async () => {
      expect(await rulesOf(plugin('return PluginInfo.fork'))).toEqual([]);
    });
  });

  describe('dunders', () => {
    it.each([
      'return ().__class__',
      'return __builtins__',
      'return run.__globals__',
      'run.__name__ = "x"',
      'return PluginInfo.__class__',
      'return PluginInfo.__class__.__bases__',
      'return PluginInfo.__init__()',
      'return "{0.__class__}".format(PluginInfo)',
      'return dict(__class__=1)',
    ])('rejects %j', async (statement) => {
      expect(await rulesOf(plugin(statement))).toContain('dunder-access');
    });

    it('allows __name__ and __doc__ as plain names, and module metadata', async () => {
      expect(await rulesOf(plugin('return __name__, __doc__'))).toEqual([]);
      expect(
        await rulesOf(
          plugin(
            'return __version__, __all__',
            '__version__ = "1.0"\n__author__ = "me"\n__all__ = ["run"]\n',
          ),
        ),
      ).toEqual([]);
    });

    it('allows reading what a thing is called: x.__name__, x.__doc__, x.__class__.__name__', async () => {
      expect(
        await rulesOf(plugin('return run.__name__, run.__doc__, PluginInfo.__class__.__name__')),
      ).toEqual([]);
    });

    it('allows defining any special method in a class body', async () => {
      const body = [
        'class Finding:',
        '    __slots__ = ("score",)',
        '    def __lt__(self, other):',
        '        return self.score < other.score',
        '    def __getitem__(self, key):',
        '        return self.score',
        '    def __contains__(self, item):',
        '        return False',
        '    async def __aenter__(self):',
        '        return self',
        '    async def __aexit__(self, *exc):',
        '        return None',
        'return sorted([Finding()])',
      ].join('\n');
      expect(await rulesOf(plugin(body))).toEqual([]);
    });

    it('allows ordinary special methods defined in a class and called on self or super()', async () => {
      const body = [
        'class Base:',
        '    def __init__(self, x):',
        '        self.x = x',
        '    def __repr__(self):',
        '        return "Base"',
        'class Child(Base):',
        '    @staticmethod',
        '    def __str__():',
        '        return "Child"',
        '    def __init__(self):',
        '        super().__init__(1)',
        '    def reset(self):',
        '        self.__init__()',
        'return Child()',
      ].join('\n');
      expect(await rulesOf(plugin(body))).toEqual([]);
    });

    it('rejects special methods outside a class body or on other objects', async () => {
      expect(await rulesOf(plugin('def __init__(self):\n    pass'))).toEqual(['dunder-access']);
      expect(await rulesOf(plugin('x = self.__init__'))).toEqual(['dunder-access']);
      expect(await rulesOf(plugin('x = super().__getattribute__("y")'))).toEqual(['dunder-access']);
    });
  });

  describe('open()', () => {
    it.each([
      'open("f")',
      'open("f", "r")',
      "open('f', 'rb')",
      'open("f", mode="rt")',
      'open("f", "r", encoding="utf-8")',
      'open(file="f", mode="r")',
    ])('allows the read-only call %j', async (call) => {
      expect(await rulesOf(plugin(`return ${call}`))).toEqual([]);
    });

    it.each([
      'open("f", "w")',
      'open("f", "a+")',
      'open("f", "r+")',
      'open("f", mode="wb")',
      'open("f", m)',
      'open("f", **kw)',
      'f = open',
      'list(map(open, paths))',
      'Path("f").write_text("x")',
    ])('rejects %j', async (statement) => {
      expect(await rulesOf(plugin(statement))).toEqual(['open-write']);
    });

    it('rejects open(*args): neither its mode nor the file it reads can be known', async () => {
      expect(await rulesOf(plugin('open(*args)'))).toEqual(['file-read', 'open-write']);
    });

    it('follows io.open and aliases of it', async () => {
      expect(await rulesOf(plugin('io.open("f", "w")', 'import io\n'))).toEqual(['open-write']);
      expect(await rulesOf(plugin('o("f", "w")', 'from io import open as o\n'))).toEqual(['open-write']);
      expect(await rulesOf(plugin('o("f")', 'from io import open as o\n'))).toEqual([]);
    });
  });

  describe('dangerous attributes', () => {
    it.each([
      ['asyncio.create_subprocess_exec("id")', 'import asyncio\n'],
      ['loop.subprocess_shell(None, "id")', ''],
      ['operator.attrgetter(name)', 'import operator\n'],
      ['operator.attrgetter("x.__class__")', 'import operator\n'],
      ['op.methodcaller("x")', 'import operator as op\n'],
      ['types.FunctionType(c, {})', 'import types\n'],
      ['FunctionType(c, {})', 'from types import FunctionType\n'],
      ['gen.gi_frame.f_back', ''],
    ])('rejects %j', async (statement, prelude) => {
      expect(await rulesOf(plugin(statement, prelude))).toContain('dangerous-attribute');
    });

    it('refuses sys.modules without an import of sys as a forbidden module', async () => {
      expect(await rulesOf(plugin('return sys.modules'))).toEqual(['forbidden-import']);
    });

    it('allows a local attribute called modules', async () => {
      expect(await rulesOf(plugin('return PluginInfo.modules'))).toEqual([]);
    });
  });

  describe('yaml', () => {
    it.each([
      'yaml.load(s)',
      'yaml.load(s, Loader=yaml.Loader)',
      'yaml.load(s, yaml.FullLoader)',
      'yaml.unsafe_load(s)',
      'yaml.full_load(s)',
      'yaml.load_all(s)',
      'f = yaml.load',
    ])('rejects %j', async (statement) => {
      // A refused loader is named twice: where it is read, and at the call that uses it.
      expect(new Set(await rulesOf(plugin(statement, 'import yaml\n')))).toEqual(
        new Set(['unsafe-yaml-load']),
      );
    });

    it('does not trust a bare SafeLoader the plugin never imported', async () => {
      expect(await rulesOf(plugin('yaml.load(s, Loader=SafeLoader)', 'import yaml\n'))).toEqual([
        'unsafe-yaml-load',
      ]);
    });

    it.each([
      'yaml.safe_load(s)',
      'yaml.load(s, Loader=yaml.SafeLoader)',
      'yaml.load(s, Loader=yaml.CSafeLoader)',
      'yaml.load(s, yaml.SafeLoader)',
      'yaml.safe_load_all(s)',
    ])('allows %j', async (statement) => {
      expect(await rulesOf(plugin(statement, 'import yaml\n'))).toEqual([]);
    });

    it('follows aliases', async () => {
      expect(await rulesOf(plugin('y.load(s)', 'import yaml as y\n'))).toEqual(['unsafe-yaml-load']);
      expect(await rulesOf(plugin('load(s)', 'from yaml import load\n'))).toEqual(['unsafe-yaml-load']);
    });
  });

  describe('format templates', () => {
    const report = (extra: string): string =>
      plugin(
        'return Report().render("example.com")',
        `class Report:\n    ROW = "{host}"\n\n    def render(self, host):\n        return self.ROW.format(host=host)\n\n${extra}`,
      );

    it('accepts a class constant template read through self or the class, and a subclass overriding it', async () => {
      expect(
        await rulesOf(
          report('class Verbose(Report):\n    ROW = "host: {host}"\n\nx = Report.ROW.format(host=1)\n'),
        ),
      ).toEqual([]);
    });

    it.each([
      [
        'a subclass with a field that reads dunders',
        'class Evil(Report):\n    ROW = "{host.__class__}"\n',
        'dunder-access',
      ],
      ['a store on an instance', 'r = Report()\nr.ROW = "{host.__class__}"\n', 'format-string'],
      ['a store on the class', 'Report.ROW = "{host.__class__}"\n', 'format-string'],
      ['setattr with the literal name', 'setattr(Report, "ROW", "{host.__class__}")\n', 'format-string'],
      [
        'a subclass property of that name',
        'class Evil(Report):\n    @property\n    def ROW(self):\n        return "{host.__class__}"\n',
        'format-string',
      ],
    ])('refuses a class constant template when %s could change it', async (_label, extra, rule) => {
      expect(await rulesOf(report(extra))).toContain(rule);
    });

    it('refuses a dataclass field as a template: each instance may carry its own', async () => {
      const prelude =
        'from dataclasses import dataclass\n\n@dataclass\nclass Report:\n    ROW: str = "{host}"\n\n' +
        '    def render(self, host):\n        return self.ROW.format(host=host)\n\n';
      expect(await rulesOf(plugin('return Report(ROW="{host.__class__}").render(1)', prelude))).toContain(
        'format-string',
      );
    });
  });

  describe('logging.Formatter', () => {
    it.each([
      ['a positional style', 'logging.Formatter("{message}", None, "{")'],
      ['arguments splatted', 'logging.Formatter(*("{message}", None, "{"))'],
      ['keywords splatted', 'logging.Formatter("{message}", **{"style": "{"})'],
      ['partial', 'functools.partial(logging.Formatter, style="%")'],
      ['a plugin subclass eleven classes down', 'Deep11("{message}", None, "{")'],
    ])('refuses a Formatter whose style is not seen at the call: %s', async (_label, body) => {
      const chain = Array.from(
        { length: 11 },
        (_, i) => `class Deep${i + 1}(${i ? `Deep${i}` : 'logging.Formatter'}):\n    pass\n`,
      ).join('');
      expect(
        await rulesOf(plugin(`return ${body}`, `import functools\nimport logging\n\n${chain}\n`)),
      ).toContain('dynamic-name');
    });
  });

  describe('decoded payloads', () => {
    it.each([
      'f(base64.b64decode(s))',
      'f(x=base64.b64decode(s))',
      'f((base64.b64decode(s)))',
      'f(*base64.b64decode(s))',
      'codecs.decode(s, "rot13")()',
      'f(bytes.fromhex(s))',
      'f(binascii.unhexlify(s))',
      'f(zlib.decompress(s))',
      'f(b64(s))',
    ])('rejects %j', async (statement) => {
      const prelude = 'import base64, binascii, codecs, zlib\nfrom base64 import b64decode as b64\n';
      expect(await rulesOf(plugin(statement, prelude))).toEqual(['decoded-call']);
    });

    it.each([
      'data = base64.b64decode(s)',
      'text = base64.b64decode(s).decode("utf-8")',
      'f(base64.b64encode(s))',
      'f(s.decode("utf-8"))',
    ])('allows %j', async (statement) => {
      expect(await rulesOf(plugin(statement, 'import base64\n'))).toEqual([]);
    });
  });

  describe('aliases across scopes', () => {
    it('keeps every meaning of a name: an alias in one scope cannot hide yaml in another', async () => {
      const source = plugin(
        'import yaml\nreturn yaml.load(PluginInfo)',
        'def unrelated():\n    import json as yaml\n    return yaml.dumps({})\n\n',
      );
      expect(await rulesOf(source)).toEqual(['unsafe-yaml-load']);
    });

    it('still treats open as the builtin where a local import of another open does not reach', async () => {
      const source = plugin(
        'return open("x", "w")',
        'def unrelated():\n    from mylib import open\n    return open("data.txt")\n\n',
      );
      // mylib is no allowed module either; the point here is the open-write.
      expect(await rulesOf(source)).toEqual(['forbidden-import', 'open-write']);
    });

    it('checks the imported name behind an alias', async () => {
      // json has no eval either: its API table says so too.
      expect(await rulesOf(plugin('return e("1")', 'from json import eval as e\n'))).toEqual([
        'forbidden-name',
        'module-attribute',
      ]);
    });

    it('does not trust a SafeLoader imported from somewhere else', async () => {
      const prelude = 'import yaml\nfrom json import SafeLoader\n';
      expect(await rulesOf(plugin('return yaml.load(s, Loader=SafeLoader)', prelude))).toEqual([
        'module-attribute',
        'unsafe-yaml-load',
      ]);
    });
  });

  describe('forbidden modules reached without importing them', () => {
    it.each([
      ['pathlib.os.system("id")', 'import pathlib\n', 'dangerous-attribute'],
      ['tempfile._os.popen("id")', 'import tempfile\n', 'dangerous-attribute'],
      ['m = pathlib\nm.os.system("id")', 'import pathlib\n', 'dangerous-attribute'],
      ['os.system("id")', 'from pathlib import os\n', 'forbidden-import'],
      ['logging.config.dictConfig({})', 'import logging\n', 'forbidden-import'],
      ['asyncio.subprocess.PIPE', 'import asyncio\n', 'dangerous-attribute'],
      ['anything.Popen(["id"])', '', 'dangerous-attribute'],
      ['conn.load_extension("x.so")', '', 'dangerous-attribute'],
      ['string.Formatter().get_field("0.x", [run], {})', 'import string\n', 'dangerous-attribute'],
    ])('rejects %j', async (body, prelude, rule) => {
      expect(await rulesOf(plugin(body, prelude))).toContain(rule);
    });

    it('does not mistake local names for module paths', async () => {
      expect(await rulesOf(plugin('config = {}\nreturn config.get("x"), PluginInfo.code'))).toEqual([]);
    });
  });

  describe('modules passed around as values', () => {
    it.each([
      ['y = yaml\ny.load(s)', 'import yaml\n', 'unsafe-yaml-load'],
      ['[io][0].open("f", "w")', 'import io\n', 'open-write'],
      ['helper(b64)', 'import base64 as b64\n', 'decoded-call'],
      ['ops = operator', 'import operator\n', 'dangerous-attribute'],
      ['d = base64.b64decode\nf(d(s))', 'import base64\n', 'decoded-call'],
    ])('rejects %j', async (body, prelude, rule) => {
      expect(await rulesOf(plugin(body, prelude))).toContain(rule);
    });

    it('accepts decoders as data: a table of them, or mapped over a list', async () => {
      const body = 'table = {"b64": base64.b64decode}\nreturn list(map(binascii.unhexlify, items)), table';
      expect(await rulesOf(plugin(body, 'import base64, binascii\n'))).toEqual([]);
    });

    it('allows the attribute spellings', async () => {
      const body = 'x = base64.b64encode(b"a")\nreturn io.StringIO(), types.SimpleNamespace(), operator.add';
      expect(await rulesOf(plugin(body, 'import base64, io, operator, types\n'))).toEqual([]);
    });
  });

  describe('module contract', () => {
    it.each([
      ['DESCRIPTION = "x"\ndef run(info: dict) -> dict:\n    return info\n'],
      ['DESCRIPTION: str = ("a" "b")\n@decorate\ndef run(info):\n    return info\n'],
    ])('accepts %j', async (source) => {
      expect(await rulesOf(source)).toEqual([]);
    });

    it.each([
      ['DESCRIPTION = b"x"\ndef run(info):\n    pass\n', 'missing-description'],
      ['DESCRIPTION = "x"\ndef run(info, more):\n    pass\n', 'missing-run'],
      ['DESCRIPTION = "x"\ndef run(info=None):\n    pass\n', 'missing-run'],
      ['DESCRIPTION = "x"\ndef run():\n    pass\n', 'missing-run'],
      ['DESCRIPTION = "x"\nasync def run(info):\n    pass\n', 'missing-run'],
      ['DESCRIPTION = "x"\nif True:\n    def run(info):\n        pass\n', 'missing-run'],
    ])('rejects %j', async (source, rule) => {
      expect(await rulesOf(source)).toEqual([rule]);
    });
  });

  describe('fails closed', () => {
    it('rejects syntax errors and missing tokens', async () => {
      expect(await rulesOf(plugin('return (1,'))).toContain('syntax-error');
      expect(await rulesOf(plugin('x = [1, 2'))).toContain('syntax-error');
      expect(await rulesOf(plugin('if True\n    pass'))).toContain('syntax-error');
    });

    it('rejects nesting deeper than 100 levels but accepts 100', async () => {
      const nested = (depth: number): string => `x = ${'['.repeat(depth)}${']'.repeat(depth)}`;
      // The body of run() is already one block deep.
      expect(await rulesOf(plugin(nested(99)))).toEqual([]);
      const { violations } = await check(plugin(nested(100)));
      expect(violations).toEqual([
        {
          rule: 'too-deep',
          message: 'Nesting deeper than 100 levels is not allowed',
          line: 4,
          column: 108,
        },
      ]);
    });
  });
});
