import { closeSharedValidator } from './validator';
import { check, HEADER, plugin, rulesOf } from '../../test/helpers/validator-plugins';

afterAll(() => closeSharedValidator());

const OS_INSTEAD =
  "a plugin neither touches files nor runs commands itself: use the framework's helpers (plugin_helper.CommandDump with a resource list)";

describe('validate: positions, imports and names of the profile', () => {
  it('accepts a minimal plugin', async () => {
    await expect(check(plugin('return None'))).resolves.toEqual({ ok: true, violations: [] });
  });

  describe('reports exact positions and messages', () => {
    it('for an import outside the profile', async () => {
      await expect(check(plugin('return 1', 'import json, os.path\n'))).resolves.toEqual({
        ok: false,
        violations: [
          {
            rule: 'forbidden-import',
            message: `Module 'os.path' is not in the plugin profile: ${OS_INSTEAD}`,
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
          {
            rule: 'forbidden-name',
            message: "Builtin 'eval' is outside the plugin profile: parse the data (json.loads, int(), ...)",
            line: 4,
            column: 9,
          },
          {
            rule: 'dunder-access',
            message:
              "Dunder attribute '__class__' is outside the plugin profile: call the operation instead (str(x), len(x), x == y, ...)",
            line: 5,
            column: 12,
          },
          {
            rule: 'forbidden-name',
            message:
              "Builtin 'open' is outside the plugin profile: read files through the framework's helpers; a plugin does not open files",
            line: 6,
            column: 12,
          },
        ],
      });
    });

    it('in code points, not UTF-16 units, after non-ASCII text', async () => {
      const { violations } = await check(plugin('x = "é😀"; eval(1)'));
      expect(violations.map(({ rule, line, column }) => [rule, line, column])).toEqual([
        ['forbidden-name', 4, 15],
      ]);
    });

    it('with line numbers that count a lone CR as a line break, as Python does', async () => {
      const { violations } = await check(`# note\rimport os\r${HEADER}def run(PluginInfo):\r    return 1\r`);
      expect(violations).toEqual([
        {
          rule: 'forbidden-import',
          message: `Module 'os' is not in the plugin profile: ${OS_INSTEAD}`,
          line: 2,
          column: 8,
        },
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

    it('for a private attribute, with the name to write instead', async () => {
      const { violations } = await check(plugin('return PluginInfo._cache'));
      expect(violations).toEqual([
        {
          rule: 'private-access',
          message: "Attribute '_cache' starts with '_': the profile has no private attributes; name it cache",
          line: 4,
          column: 23,
        },
      ]);
    });
  });

  it('reports each finding once', async () => {
    const { violations } = await check(plugin('eval(1); eval(2)'));
    expect(violations.map(({ line, column }) => [line, column])).toEqual([
      [4, 5],
      [4, 14],
    ]);
  });

  it('warns, without refusing, of a name the plugin reads and never binds', async () => {
    await expect(check(plugin('return get_resources("PassiveSSL")'))).resolves.toEqual({
      ok: true,
      violations: [],
      warnings: [
        {
          rule: 'unbound-name',
          message:
            "'get_resources' is never bound in the plugin: CPython raises NameError here (import it or assign it first)",
          line: 4,
          column: 12,
        },
      ],
    });
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
      'import requests',
      'import yaml',
      'import copy',
      'import operator',
      'import functools',
      'import threading',
      'import _operator',
      'import json.decoder',
    ])('refuses %j: a module outside the profile', async (statement) => {
      expect(await rulesOf(plugin('return 1', `${statement}\n`))).toContain('forbidden-import');
    });

    it.each([
      'import json',
      'from xml.etree import ElementTree as ET',
      'import xml.etree.ElementTree as ET',
      'from urllib import parse',
      'import urllib.parse',
      'from owtf.plugin.helper import plugin_helper',
      'from owtf.managers.resource import get_resources',
      'from collections import defaultdict, Counter',
      'from __future__ import annotations',
      'from typing import List, Optional',
    ])('accepts %j', async (statement) => {
      expect(await rulesOf(plugin('return 1', `${statement}\n`))).toEqual([]);
    });

    it.each([
      [
        'import requests',
        "make requests with the framework's requester (from owtf.requester.base import requester)",
      ],
      ['import subprocess', OS_INSTEAD],
      ['import antigravity', 'use the modules of the plugin profile (docs/plugin-profile.md)'],
    ])('says what to use instead of %j', async (statement, instead) => {
      const { violations } = await check(plugin('return 1', `${statement}\n`));
      expect(violations.map((violation) => violation.message)).toEqual([
        `Module '${statement.split(' ')[1]}' is not in the plugin profile: ${instead}`,
      ]);
    });

    it('refuses an import below the top of the module', async () => {
      const { violations } = await check(plugin('import json\nreturn json.dumps(1)'));
      expect(violations).toEqual([
        {
          rule: 'import-position',
          message:
            'Imports belong at the top of the module, before any other statement: move this import there',
          line: 4,
          column: 5,
        },
      ]);
      expect(await rulesOf(`${HEADER}import json\n\ndef run(PluginInfo):\n    return 1\n`)).toEqual([
        'import-position',
      ]);
    });

    it('accepts a docstring and module metadata before the imports', async () => {
      const source = `"""Doc."""\n__version__ = "1.0"\nimport json\n${HEADER}def run(PluginInfo):\n    return json.dumps(__version__)\n`;
      expect(await rulesOf(source)).toEqual([]);
    });

    it.each([
      ['import logging\n', 'logging.os'],
      ['import json\n', 'json.decoder'],
      ['import logging\n', 'logging.basicConfig'],
      ['import logging\n', 'logging.Handler'],
      ['import string\n', 'string.Formatter'],
      ['import string\n', 'string.Template'],
      ['import uuid\n', 'uuid.uuid1'],
      ['import uuid\n', 'uuid.getnode'],
      ['import hashlib\n', 'hashlib.file_digest'],
      ['import xml.etree.ElementTree as ET\n', 'ET.parse'],
      ['import xml.etree.ElementTree as ET\n', 'ET.iterparse'],
      ['import csv\n', 'csv.register_dialect'],
      ['import typing\n', 'typing.get_origin'],
    ])('refuses a member outside the table of an allowed module: %j %j', async (prelude, body) => {
      expect(await rulesOf(plugin(`return ${body}`, prelude))).toContain('module-attribute');
    });

    it('names what the module allows', async () => {
      const { violations } = await check(plugin('return json.load(PluginInfo)', 'import json\n'));
      expect(violations.map((violation) => violation.message)).toEqual([
        "'load' is not in the plugin profile's table of module json; it allows JSONDecodeError, dumps, loads",
      ]);
    });

    it('allows the members of an allowed module, and its allowed submodules', async () => {
      const prelude =
        'import json\nimport xml.etree.ElementTree\nimport urllib.parse\nfrom collections import Counter\n';
      const body =
        'return json.loads("[]"), json.JSONDecodeError, xml.etree.ElementTree.fromstring("<a/>"), urllib.parse.quote("a b"), Counter()';
      expect(await rulesOf(plugin(body, prelude))).toEqual([]);
    });

    it('refuses importing a name outside the table: from json import codecs', async () => {
      expect(await rulesOf(plugin('return 1', 'from json import codecs\n'))).toEqual(['module-attribute']);
    });

    it('refuses a module used as a value', async () => {
      expect(await rulesOf(plugin('return [json]', 'import json\n'))).toEqual(['module-attribute']);
      // Refused where it is bound and where it is read.
      expect(await rulesOf(plugin('x = urllib.parse\nreturn x', 'import urllib.parse\n'))).toEqual([
        'module-attribute',
        'module-attribute',
      ]);
    });

    it('rejects star and relative imports with their own rules', async () => {
      expect(await rulesOf(plugin('return 1', 'from math import *\n'))).toEqual(['star-import']);
      expect(await rulesOf(plugin('return 1', 'from . import helpers\n'))).toEqual(['relative-import']);
      expect(await rulesOf(plugin('return 1', 'from .helpers import go\n'))).toEqual(['relative-import']);
    });
  });

  describe("private names: none, not even the plugin's own", () => {
    it.each([
      ['import uuid\n', 'return uuid._get_command_stdout("id")'],
      ['import re\n', 'return re.Pattern._cache'],
      ['', 'return PluginInfo._private'],
      ['class Probe:\n    def __init__(self):\n        self._seen = set()\n\n', 'return Probe()'],
      ['class Probe:\n    def _helper(self):\n        return 1\n\n', 'return Probe()'],
      ['', 'return super()._secret()'],
      ['from collections import Counter\n', 'return Counter()._keep_positive()'],
    ])('refuses %j %j', async (prelude, body) => {
      expect(await rulesOf(plugin(body, prelude))).toContain('private-access');
    });

    it('accepts module-level names with a leading underscore (they are names, not attributes)', async () => {
      expect(await rulesOf(plugin('return _cache.get("a")', '_cache = {}\n_cache["a"] = 1\n'))).toEqual([]);
    });
  });

  describe('isinstance narrows a parameter to an object of the plugin', () => {
    /** A class with `key`, and a method `same(self, other)` whose body is given. */
    const otherInstance = (body: string): string =>
      plugin(
        'return 1',
        `class Finding:\n    severity = None\n\n    def same(self, other):\n${body
          .split('\n')
          .map((line) => `        ${line}`)
          .join('\n')}\n\n`,
      );

    it.each([
      'return isinstance(other, Finding) and self.severity == other.severity',
      'if isinstance(other, Finding):\n    return other.severity\nreturn None',
      'if not isinstance(other, Finding):\n    return NotImplemented\nreturn other.severity',
      'return other.severity if isinstance(other, Finding) else None',
      'if isinstance(other, (Finding, Finding)):\n    return other.severity',
    ])('accepts a read on the checked parameter: %j', async (body) => {
      expect(await rulesOf(otherInstance(body))).toEqual([]);
    });

    it.each([
      'return other.severity',
      'if isinstance(other, Finding):\n    pass\nreturn other.severity',
      'if not isinstance(other, Finding):\n    print(other)\nreturn other.severity',
      'return isinstance(other, Finding) or other.severity',
      'if isinstance(other, (Finding, int)):\n    return other.severity',
      'if isinstance(other, Finding):\n    other = PluginInfo\n    return other.severity',
      'def inner():\n    return other.severity\nif isinstance(other, Finding):\n    return inner()',
      'return [other.severity for _ in [1] if isinstance(other, Finding)]',
    ])('refuses a read the check does not cover: %j', async (body) => {
      expect(await rulesOf(otherInstance(body))).toContain('untyped-attribute');
    });

    it("refuses a check by the plugin's own isinstance", async () => {
      const prelude =
        'def isinstance(value, kind):\n    return True\n\nclass Finding:\n    severity = None\n\n    def same(self, other):\n        if isinstance(other, Finding):\n            return other.severity\n\n';
      expect(await rulesOf(plugin('return 1', prelude))).toContain('untyped-attribute');
    });
  });

  describe('values the checker cannot type', () => {
    it.each(['append', 'get', 'split', 'strip', 'items', 'group', 'hexdigest', 'isoformat'])(
      'accepts the untyped-safe name %j on a parameter',
      async (name) => {
        expect(await rulesOf(plugin(`return PluginInfo.${name}`))).toEqual([]);
      },
    );

    it.each(['set_val', 'RunCommand', 'CommandDump', 'scanner', 'loggerDict', 'write_text', 'system'])(
      'refuses %j on a parameter: it is not safe on every type',
      async (name) => {
        expect(await rulesOf(plugin(`return PluginInfo.${name}`))).toEqual(['untyped-attribute']);
      },
    );

    it('types a value from the call that makes it', async () => {
      expect(
        await rulesOf(plugin('m = re.search("a", "abc")\nreturn m.span() if m else None', 'import re\n')),
      ).toEqual([]);
      expect(await rulesOf(plugin('return re.compile("a").scanner("a")', 'import re\n'))).toEqual([
        'type-attribute',
      ]);
    });
  });
});
