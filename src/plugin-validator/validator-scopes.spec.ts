import { closeSharedValidator } from './validator';
import { check, plugin, rulesOf } from '../../test/helpers/validator-plugins';

afterAll(() => closeSharedValidator());

describe('validate: scopes, modules as values, the module contract and failing closed', () => {
  describe('aliases across scopes', () => {
    it('refuses an import inside a function, whatever it binds', async () => {
      const source = plugin(
        'return json.dumps(PluginInfo)',
        'import json\n\n\ndef unrelated():\n    import yaml as json\n    return json.dump({})\n\n',
      );
      expect(new Set(await rulesOf(source))).toEqual(new Set(['import-position', 'forbidden-import']));
    });

    it('still treats open as the builtin where a local binding of another open does not reach', async () => {
      const source = plugin(
        'return open("x")',
        'def unrelated():\n    open = len\n    return open("data.txt")\n\n',
      );
      expect(await rulesOf(source)).toEqual(['forbidden-name']);
    });

    it('checks the imported name behind an alias', async () => {
      expect(await rulesOf(plugin('return e("1")', 'from json import eval as e\n'))).toEqual([
        'module-attribute',
      ]);
      expect(
        await rulesOf(plugin('return d(PluginInfo, object_hook=dict)', 'from json import loads as d\n')),
      ).toEqual(['library-call']);
    });
  });

  describe('modules reached without importing them', () => {
    it.each([
      ['pathlib.os.system("id")', 'import pathlib\n', 'forbidden-import'],
      ['tempfile._os.popen("id")', 'import tempfile\n', 'forbidden-import'],
      ['os.system("id")', 'from pathlib import os\n', 'forbidden-import'],
      ['logging.config.dictConfig({})', 'import logging\n', 'module-attribute'],
      ['json.decoder.scanstring', 'import json\n', 'module-attribute'],
      ['string.Formatter().get_field("0.x", [run], {})', 'import string\n', 'module-attribute'],
      ['PluginInfo.Popen(["id"])', '', 'untyped-attribute'],
      ['PluginInfo.load_extension("x.so")', '', 'untyped-attribute'],
    ])('rejects %j', async (body, prelude, rule) => {
      expect(await rulesOf(plugin(body, prelude))).toContain(rule);
    });

    it('does not mistake local names for module paths', async () => {
      expect(await rulesOf(plugin('config = {}\nreturn config.get("x"), PluginInfo.code'))).toEqual([]);
    });
  });

  describe('modules passed around as values', () => {
    it.each([
      ['y = yaml\ny.load(s)', 'import yaml\n', 'forbidden-import'],
      ['[io][0].StringIO()', 'import io\n', 'module-attribute'],
      ['helper(b64)', 'import base64 as b64\n', 'module-attribute'],
      ['ops = operator', 'import operator\n', 'forbidden-import'],
      ['d = base64.b64decode\nf(d(s))', 'import base64\n', 'decoded-call'],
    ])('rejects %j', async (body, prelude, rule) => {
      expect(await rulesOf(plugin(body, prelude))).toContain(rule);
    });

    it('accepts decoders as data: a table of them, or mapped over a list', async () => {
      const body =
        'table = {"b64": base64.b64decode}\nreturn list(map(binascii.unhexlify, PluginInfo)), table';
      expect(await rulesOf(plugin(body, 'import base64, binascii\n'))).toEqual([]);
    });

    it('allows the attribute spellings', async () => {
      const body = 'x = base64.b64encode(b"a")\nreturn io.StringIO(), collections.OrderedDict(), x';
      expect(await rulesOf(plugin(body, 'import base64, collections, io\n'))).toEqual([]);
    });
  });

  describe('module contract', () => {
    it.each([
      ['DESCRIPTION = "x"\ndef run(info: dict) -> dict:\n    return info\n'],
      ['DESCRIPTION: str = ("a" "b")\ndef run(info):\n    return info\n'],
    ])('accepts %j', async (source) => {
      expect(await rulesOf(source)).toEqual([]);
    });

    it.each([
      ['DESCRIPTION = b"x"\ndef run(info):\n    pass\n', 'missing-description'],
      ['DESCRIPTION = "x"\ndef run(info, more):\n    pass\n', 'missing-run'],
      ['DESCRIPTION = "x"\ndef run(info=None):\n    pass\n', 'missing-run'],
      ['DESCRIPTION = "x"\ndef run():\n    pass\n', 'missing-run'],
      ['DESCRIPTION = "x"\nif True:\n    def run(info):\n        pass\n', 'missing-run'],
    ])('rejects %j', async (source, rule) => {
      expect(await rulesOf(source)).toEqual([rule]);
    });

    it('refuses an async run twice: outside the profile, and not the contract', async () => {
      expect(await rulesOf('DESCRIPTION = "x"\nasync def run(info):\n    pass\n')).toEqual([
        'missing-run',
        'profile-syntax',
      ]);
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
