import { closeSharedValidator } from './validator';
import { check, HEADER, plugin, rulesOf } from '../../test/helpers/validator-plugins';

afterAll(() => closeSharedValidator());

describe('validate: positions and imports', () => {
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
});
