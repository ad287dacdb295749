import { closeSharedValidator } from './validator';
import { plugin, rulesOf } from '../../test/helpers/validator-plugins';

afterAll(() => closeSharedValidator());

describe('validate: files, attributes, templates and payloads', () => {
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
});
