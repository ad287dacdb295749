import { closeSharedValidator } from './validator';
import { plugin, rulesOf } from '../../test/helpers/validator-plugins';

afterAll(() => closeSharedValidator());

describe('validate: forbidden names and dunders', () => {
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
});
