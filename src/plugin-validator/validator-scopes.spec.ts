import { closeSharedValidator } from './validator';
import { check, plugin, rulesOf } from '../../test/helpers/validator-plugins';

afterAll(() => closeSharedValidator());

describe('validate: scopes, modules as values, the module contract and failing closed', () => {
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
