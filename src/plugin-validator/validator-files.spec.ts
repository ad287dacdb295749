import { closeSharedValidator } from './validator';
import { plugin, rulesOf } from '../../test/helpers/validator-plugins';

afterAll(() => closeSharedValidator());

const RESOURCES =
  'from owtf.managers.resource import get_resources\nfrom owtf.plugin.helper import plugin_helper\n';

describe('validate: files, library calls, restricted values and templates', () => {
  describe('files and processes: only through the framework', () => {
    it.each(['open("f")', 'open("f", "w")', 'f = open', 'list(map(open, paths))', 'open(*args)'])(
      'rejects %j',
      async (statement) => {
        expect(await rulesOf(plugin(statement))).toContain('forbidden-name');
      },
    );

    it.each([
      ['io.open("f", "w")', 'import io\n', 'module-attribute'],
      ['Path("f").write_text("x")', 'from pathlib import Path\n', 'forbidden-import'],
      ['asyncio.create_subprocess_exec("id")', 'import asyncio\n', 'forbidden-import'],
      ['types.FunctionType(c, {})', 'import types\n', 'forbidden-import'],
      ['PluginInfo.subprocess_shell(None, "id")', '', 'untyped-attribute'],
      ['ET.parse("f.xml")', 'import xml.etree.ElementTree as ET\n', 'module-attribute'],
      ['ET.ElementTree(e).write("f")', 'import xml.etree.ElementTree as ET\n', 'module-attribute'],
    ])('rejects %j', async (statement, prelude, rule) => {
      expect(await rulesOf(plugin(statement, prelude))).toContain(rule);
    });

    it('refuses sys.modules without an import of sys', async () => {
      expect(await rulesOf(plugin('return sys.modules'))).toEqual(['forbidden-import']);
    });
  });

  describe('reserved attributes, on every value', () => {
    it.each([
      'gen.gi_frame.f_back',
      'PluginInfo.gi_code',
      'PluginInfo.f_globals',
      'PluginInfo.tb_frame',
      'PluginInfo.co_consts',
      'PluginInfo.cr_frame',
      'PluginInfo.mro()',
      'PluginInfo.manager',
      'PluginInfo.handlers',
      'PluginInfo.parent',
      'PluginInfo.stream',
      'PluginInfo.root',
      'PluginInfo.vformat("{}", [], {})',
      'Report().mro',
    ])('rejects %j', async (statement) => {
      const prelude = 'class Report:\n    pass\n\n\n';
      expect(await rulesOf(plugin(`return ${statement}`, prelude))).toContain('reserved-attribute');
    });
  });

  describe('yaml is outside the profile', () => {
    it.each(['yaml.load(s)', 'yaml.safe_load(s)', 'yaml.load(s, Loader=yaml.SafeLoader)'])(
      'rejects %j',
      async (statement) => {
        expect(await rulesOf(plugin(statement, 'import yaml\n'))).toContain('forbidden-import');
      },
    );
  });

  describe('format templates: only literal, with plain fields', () => {
    it.each([
      '"{} of {}".format(PluginInfo, 1)',
      '"{0} {name!r:>10}".format(1, name=PluginInfo)',
      '"{host}".format_map({"host": PluginInfo})',
      '"{:{width}}".format(1, width=5)',
      'f"{PluginInfo!r}"',
    ])('accepts %j', async (expression) => {
      expect(await rulesOf(plugin(`return ${expression}`))).toEqual([]);
    });

    it.each([
      ['ROW.format(host=1)', 'ROW = "{host}"\n'],
      ['self.ROW.format(host=1)', ''],
      ['PluginInfo["t"].format(1)', ''],
      ['str.format("{}", 1)', ''],
      ['"{0.name}".format(PluginInfo)', ''],
      ['"{0[key]}".format(PluginInfo)', ''],
      ['"{:{0.x}}".format(PluginInfo)', ''],
      ['"{".format(1)', ''],
    ])('refuses %j', async (expression, prelude) => {
      expect(await rulesOf(plugin(`return ${expression}`, prelude))).toContain('format-string');
    });
  });

  describe('logging: a Logger only as name.method("...", value)', () => {
    const LOG = 'import logging\n\nLOG = logging.getLogger(__name__)\n';

    it.each([
      'LOG.info("found %s", PluginInfo)',
      'logging.info(PluginInfo)',
      'logging.warning("%s of %s", 1, 2)',
      'LOG.exception("failed")',
    ])('accepts %j', async (statement) => {
      expect(await rulesOf(plugin(statement, LOG))).toEqual([]);
    });

    it.each([
      ['LOG.info("x", extra={"a": 1})', 'library-call'],
      ['logging.info("x", exc_info=True)', 'library-call'],
      ['LOG.info("x", **PluginInfo)', 'library-call'],
      ['return LOG', 'restricted-value'],
      ['helper = [LOG]', 'restricted-value'],
      ['print(LOG)', 'restricted-value'],
      ['log = LOG\nlog.info("x")', 'restricted-value'],
      ['f = LOG.info', 'restricted-value'],
      ['logging.basicConfig(filename="x")', 'module-attribute'],
      ['LOG.setLevel(10)', 'type-attribute'],
      ['LOG.addHandler(None)', 'type-attribute'],
      ['LOG.manager', 'reserved-attribute'],
      ['logging.Formatter("{message}", None, "{")', 'module-attribute'],
    ])('refuses %j', async (statement, rule) => {
      expect(await rulesOf(plugin(statement, LOG))).toContain(rule);
    });
  });

  describe('library calls: the keywords of the table, restricted callables only called', () => {
    it.each([
      ['json.loads(s, object_hook=dict)', 'import json\n', 'library-call'],
      ['json.loads(s, **PluginInfo)', 'import json\n', 'library-call'],
      ['json.dumps(s, default=repr)', 'import json\n', 'library-call'],
      ['print("x", file=PluginInfo)', '', 'library-call'],
      ['sorted(PluginInfo, key=json.loads)', 'import json\n', 'library-value'],
      ['f = json.loads', 'import json\n', 'library-value'],
      ['x = List', 'from typing import List\n', 'library-value'],
      ['property(PluginInfo)', '', 'library-call'],
      ['super(int, 1)', '', 'super-call'],
    ])('refuses %j', async (statement, prelude, rule) => {
      expect(await rulesOf(plugin(statement, prelude))).toContain(rule);
    });

    it.each([
      ['json.dumps(PluginInfo, indent=2, sort_keys=True)', 'import json\n'],
      ['sorted(PluginInfo, key=len, reverse=True)', ''],
      ['list(map(str, PluginInfo))', ''],
      ['defaultdict(list)', 'from collections import defaultdict\n'],
      ['re.sub("a", lambda match: match.group(0).upper(), "abc")', 'import re\n'],
      ['x: List[str] = []', 'from typing import List\n'],
    ])('accepts %j', async (statement, prelude) => {
      expect(await rulesOf(plugin(statement, prelude))).toEqual([]);
    });
  });

  describe('CommandDump: only with a resource list from get_resources that nothing else reads', () => {
    it.each([
      'return plugin_helper.CommandDump("T", "O", get_resources("Nikto"), PluginInfo, [])',
      'resource = get_resources("Nikto")\nreturn plugin_helper.CommandDump("T", "O", resource, PluginInfo, "")',
      'resource = get_resources("Links")\nresource[0][1] = "x"\nreturn plugin_helper.resource_linklist("L", resource)',
    ])('accepts %j', async (body) => {
      expect(await rulesOf(plugin(body, RESOURCES))).toEqual([]);
    });

    it.each([
      ['a literal list', 'return plugin_helper.CommandDump("T", "O", [["x", "id"]], PluginInfo, [])'],
      [
        'a list changed first',
        'resource = get_resources("Nikto")\nresource[0][1] = "id"\nreturn plugin_helper.CommandDump("T", "O", resource, PluginInfo, [])',
      ],
      [
        'an alias of a list changed through the first name',
        'resource = get_resources("Nikto")\nkept = resource\nresource[0][1] = "id"\nreturn plugin_helper.CommandDump("T", "O", kept, PluginInfo, [])',
      ],
      [
        'a list read in a loop',
        'resource = get_resources("Nikto")\nfor item in resource:\n    item[1] = "id"\nreturn plugin_helper.CommandDump("T", "O", resource, PluginInfo, [])',
      ],
      ['a starred argument', 'return plugin_helper.CommandDump(*PluginInfo)'],
    ])('refuses %s', async (_label, body) => {
      expect(await rulesOf(plugin(body, RESOURCES))).toContain('library-call');
    });

    it('refuses CommandDump taken as a value, or reached through an untyped value', async () => {
      expect(await rulesOf(plugin('dump = plugin_helper.CommandDump', RESOURCES))).toEqual(['library-value']);
      expect(
        await rulesOf(plugin('return PluginInfo.CommandDump("T", "O", [], PluginInfo, [])', RESOURCES)),
      ).toEqual(['untyped-attribute']);
    });
  });

  describe('decoded payloads', () => {
    it.each([
      'f(base64.b64decode(s))',
      'f(x=base64.b64decode(s))',
      'f((base64.b64decode(s)))',
      'f(*base64.b64decode(s))',
      'f(bytes.fromhex(s))',
      'f(binascii.unhexlify(s))',
      'f(zlib.decompress(s))',
      'f(b64(s))',
    ])('rejects %j', async (statement) => {
      const prelude = 'import base64, binascii, zlib\nfrom base64 import b64decode as b64\n';
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
