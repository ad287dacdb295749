import { closeSharedValidator } from './validator';
import { plugin, rulesOf } from '../../test/helpers/validator-plugins';

afterAll(() => closeSharedValidator());

describe('validate: the names of the profile', () => {
  describe('builtins', () => {
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
      'getattr(PluginInfo, "score", 0)',
      'getattr(PluginInfo, name)',
      'setattr(PluginInfo, "seen", 1)',
      'hasattr(PluginInfo, "keys")',
      'type(PluginInfo)',
      'open("words.txt")',
      'x = ｅｖａｌ',
      'def helper(x=breakpoint): pass',
      'def helper(help=False): pass',
      'return help()',
    ])('rejects %j', async (statement) => {
      expect(await rulesOf(plugin(statement))).toContain('forbidden-name');
    });

    it.each([
      'return len(PluginInfo), sorted(PluginInfo), isinstance(PluginInfo, dict)',
      'id = 1\nreturn id',
    ])('accepts the vetted builtins, and a name of its own that a builtin also has: %j', async (body) => {
      expect(await rulesOf(plugin(body))).toEqual([]);
    });

    it('allows builtin names as keyword-argument names', async () => {
      expect(await rulesOf(plugin('return dict(input=1, vars=2, compile=3)'))).toEqual([]);
    });

    it('allows library members that share a name with a builtin', async () => {
      expect(await rulesOf(plugin('return re.compile("x")', 'import re\n'))).toEqual([]);
      expect(await rulesOf(plugin('return compile("x")', 'from re import compile\n'))).toEqual([]);
    });

    it('refuses an attribute named like a builtin when the value may be anything', async () => {
      expect(await rulesOf(plugin('PluginInfo.exec("1")'))).toEqual(['untyped-attribute']);
      expect(await rulesOf(plugin('return PluginInfo.fork'))).toEqual(['untyped-attribute']);
    });

    it('refuses attrgetter (outside the profile): a sort key is a function of the plugin', async () => {
      const body = 'return sorted(PluginInfo, key=operator.attrgetter("score", "host.name"))';
      expect(await rulesOf(plugin(body, 'import operator\n'))).toContain('forbidden-import');
      expect(await rulesOf(plugin('return sorted(PluginInfo, key=lambda item: item.get("score"))'))).toEqual(
        [],
      );
    });

    it('allows decoded bytes passed straight to a hash or len', async () => {
      const body =
        'return hashlib.sha256(base64.b64decode(PluginInfo)).hexdigest(), len(base64.b64decode(PluginInfo))';
      expect(await rulesOf(plugin(body, 'import base64\nimport hashlib\n'))).toEqual([]);
    });

    it('refuses a decoded value handed to a name the plugin never binds', async () => {
      expect(await rulesOf(plugin('return handle(base64.b64decode(PluginInfo))', 'import base64\n'))).toEqual(
        ['decoded-call'],
      );
    });

    it("refuses a never-bound name that is a module's", async () => {
      expect(await rulesOf(plugin('return sys.modules'))).toEqual(['forbidden-import']);
    });
  });

  describe('attribute stores', () => {
    const helper =
      'class Report:\n    title = ""\n\n\ndef fill(report, title=None):\n    report.title = title\n\n\n';

    it('refuses a store on a parameter, whatever the calls pass', async () => {
      expect(await rulesOf(plugin('fill(Report(), "a")', helper))).toEqual(['attribute-store']);
      expect(await rulesOf(plugin('setattr(PluginInfo, "seen", 1)'))).toEqual(['forbidden-name']);
    });

    it('accepts a store on self, on the class and on an object built with C(...) in the function', async () => {
      const prelude =
        'class Report:\n    count = 0\n\n    def __init__(self):\n        self.title = ""\n\n    @classmethod\n    def seen(cls):\n        cls.count += 1\n\n\n';
      expect(
        await rulesOf(
          plugin('report = Report()\nreport.title = "a"\nReport.count = 2\nreturn report', prelude),
        ),
      ).toEqual([]);
    });
  });

  describe('dunders', () => {
    it.each([
      'return ().__class__',
      'return __builtins__',
      'return run.__globals__',
      'run.__name__ = "x"',
      'return run.__name__',
      'return PluginInfo.__class__.__name__',
      'return PluginInfo.__class__.__bases__',
      'return PluginInfo.__init__()',
      'return dict(__class__=1)',
      'return {"__dict__": 1}',
      'return PluginInfo["__globals__"]',
    ])('rejects %j', async (statement) => {
      expect(await rulesOf(plugin(statement))).toContain('dunder-access');
    });

    it('refuses a template field that reads an attribute, dunder or not', async () => {
      expect(await rulesOf(plugin('return "{0.__class__}".format(PluginInfo)'))).toEqual(['format-string']);
      expect(await rulesOf(plugin('return "{0.name}".format(PluginInfo)'))).toEqual(['format-string']);
    });

    it('allows __name__ and __doc__ as plain names, module metadata, and the string "__main__"', async () => {
      expect(await rulesOf(plugin('return __name__ == "__main__", __doc__'))).toEqual([]);
      expect(
        await rulesOf(
          plugin(
            'return __version__, __all__',
            '__version__ = "1.0"\n__author__ = "me"\n__all__ = ["run"]\n',
          ),
        ),
      ).toEqual([]);
    });

    it('allows the special methods of the profile, and super().__init__ in a method', async () => {
      const prelude = [
        'class Base:',
        '    def __init__(self, x):',
        '        self.x = x',
        '    def __repr__(self):',
        '        return "Base"',
        '    def __lt__(self, other):',
        '        return isinstance(other, Base) and self.x < other.x',
        'class Child(Base):',
        '    @staticmethod',
        '    def __str__():',
        '        return "Child"',
        '    def __init__(self):',
        '        super().__init__(1)',
        '',
        '',
      ].join('\n');
      expect(await rulesOf(plugin('return sorted([Child(), Base(2)])', prelude))).toEqual([]);
    });

    it.each([
      ['__getitem__', 'def __getitem__(self, key):\n        return 1'],
      ['__getattr__', 'def __getattr__(self, name):\n        return 1'],
      ['__init_subclass__', 'def __init_subclass__(cls):\n        pass'],
      ['__reduce__', 'def __reduce__(self):\n        return ()'],
      ['__format__', 'def __format__(self, spec):\n        return ""'],
    ])('refuses the special method %s', async (_name, method) => {
      expect(await rulesOf(plugin('return Finding()', `class Finding:\n    ${method}\n\n\n`))).toEqual([
        'class-machinery',
      ]);
    });

    it('rejects __slots__, and special methods outside a class body or called by name', async () => {
      expect(await rulesOf(plugin('return 1', 'class Finding:\n    __slots__ = ("score",)\n\n\n'))).toEqual([
        'dunder-access',
      ]);
      expect(await rulesOf(plugin('def __init__(self):\n    pass'))).toEqual(['dunder-access']);
      expect(await rulesOf(plugin('x = self.__init__'))).toEqual(['dunder-access']);
      expect(await rulesOf(plugin('x = super().__getattribute__("y")'))).toContain('dunder-access');
    });
  });
});
