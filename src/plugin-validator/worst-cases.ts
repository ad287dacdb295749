/**
 * Generated worst cases of the analyser (issues 32 and 42): each repeats one pattern of the plugin
 * profile to about `targetBytes`: the patterns that were quadratic in the rules before the
 * profile, and the shapes that stress one linear pass (deep nesting, long chains, many names,
 * classes, templates and `and` chains). Every one is inside the profile: the spec checks each is
 * accepted, the bench times them, and python3 -m cProfile on their output finds the next one.
 */
export type WorstCase =
  | 'methods-through-class'
  | 'literal-templates'
  | 'narrowed-reads-on-parameter'
  | 'many-classes'
  | 'class-chain'
  | 'stores-on-built-objects'
  | 'deep-nesting'
  | 'long-name-chain'
  | 'self-dependent-name'
  | 'many-names'
  | 'and-chains'
  | 'resource-lists';

export const WORST_CASES: readonly WorstCase[] = [
  'methods-through-class',
  'literal-templates',
  'narrowed-reads-on-parameter',
  'many-classes',
  'class-chain',
  'stores-on-built-objects',
  'deep-nesting',
  'long-name-chain',
  'self-dependent-name',
  'many-names',
  'and-chains',
  'resource-lists',
];

function grow(head: string[], targetBytes: number, next: (index: number) => string, tail: string): string {
  const parts = [...head];
  let size = parts.join('').length + tail.length;
  for (let index = 0; size < targetBytes; index++) {
    const part = next(index);
    parts.push(part);
    size += part.length;
  }
  parts.push(tail);
  return parts.join('');
}

export function generateWorstCase(kind: WorstCase, targetBytes: number): string {
  switch (kind) {
    case 'methods-through-class': {
      // Half methods, half reads of them through the class (`Scanner.check_7`).
      const methods = Math.max(1, Math.floor(targetBytes / 2 / 80));
      const head = ['DESCRIPTION = "Many reads of methods through a class"\n\n\nclass Scanner:\n'];
      for (let index = 0; index < methods; index++) {
        head.push(
          `    def check_${index}(self, value):\n        self.seen_${index} = value\n        return value\n\n`,
        );
      }
      head.push('\ndef run(PluginInfo):\n    results = []\n');
      return grow(
        head,
        targetBytes,
        (index) => `    results.append(Scanner.check_${index % methods})\n`,
        '    return len(results)\n',
      );
    }
    case 'literal-templates':
      return grow(
        ['DESCRIPTION = "Thousands of literal templates"\n\n\ndef run(PluginInfo):\n    out = []\n'],
        targetBytes,
        (index) => `    out.append("{} {} row ${index} {!r:>10}".format(PluginInfo, ${index}, "ok"))\n`,
        '    return out\n',
      );
    case 'narrowed-reads-on-parameter':
      return grow(
        [
          'DESCRIPTION = "Reads on a parameter narrowed by isinstance"\n\n\nclass Finding:\n    def __init__(self, key):\n',
          '        self.key = key\n        self.rank = 0\n\n    def merge(self, other):\n',
          '        if not isinstance(other, Finding):\n            return None\n        total = 0\n',
        ],
        targetBytes,
        (index) => `        total += len(other.key) + other.rank + ${index}\n`,
        '        return total\n\n\ndef run(PluginInfo):\n    return Finding("a").merge(Finding("b"))\n',
      );
    case 'many-classes':
      return grow(
        ['DESCRIPTION = "Many classes, each with a method and a comparison"\n\n'],
        targetBytes,
        (index) =>
          `class Row${index}:\n    TITLE = "row ${index}"\n\n    def render(self, host):\n        return "{} {}".format(self.TITLE, host)\n\n` +
          `    def __eq__(self, other):\n        return isinstance(other, Row${index}) and other.TITLE == self.TITLE\n\n\n`,
        'def run(PluginInfo):\n    return Row0().render("h")\n',
      );
    case 'class-chain':
      // Each class derives from the one before and is built.
      return grow(
        [
          'DESCRIPTION = "A chain of classes, each built once"\n\nLEVELS = []\n\n\nclass Level0:\n    depth = 0\n\n\n',
        ],
        targetBytes,
        (index) =>
          `class Level${index + 1}(Level${index}):\n    depth = ${index + 1}\nLEVELS.append(Level${index + 1}())\n`,
        'def run(PluginInfo):\n    return len(LEVELS)\n',
      );
    case 'stores-on-built-objects':
      return grow(
        [
          'DESCRIPTION = "Stores on objects built in the same function"\n\n\nclass Finding:\n    def __init__(self):\n',
          '        self.score = 0\n\n\ndef run(PluginInfo):\n    findings = []\n',
        ],
        targetBytes,
        (index) =>
          `    item${index} = Finding()\n    item${index}.score = ${index}\n    findings.append(item${index})\n`,
        '    return len(findings)\n',
      );
    case 'deep-nesting': {
      // Functions of 45 nested ifs (the limit is 100 levels), each level reading a typed value.
      const depth = 45;
      let block = '';
      for (let level = 0; level < depth; level++) {
        block += `${'    '.repeat(level + 1)}if text.startswith("${level}"):\n`;
      }
      block += `${'    '.repeat(depth + 1)}return text.strip()\n${'    '}return None\n\n\n`;
      return grow(
        ['DESCRIPTION = "Deeply nested conditions"\n\n\n'],
        targetBytes,
        (index) => `def check_${index}(value):\n    text = str(value)\n${block}`,
        'def run(PluginInfo):\n    return check_0(PluginInfo)\n',
      );
    }
    case 'long-name-chain':
      // Each name is bound from the one before: a type follows the whole chain.
      return grow(
        ['DESCRIPTION = "A long chain of names"\n\nname_0 = "start"\n'],
        targetBytes,
        (index) => `name_${index + 1} = name_${index}.strip()\n`,
        '\n\ndef run(PluginInfo):\n    return name_1.upper()\n',
      );
    case 'self-dependent-name':
      // One name bound thousands of times from itself: its type is a fixpoint.
      return grow(
        [
          'DESCRIPTION = "One name rebound from itself"\n\n\ndef run(PluginInfo):\n    text = str(PluginInfo)\n',
        ],
        targetBytes,
        (index) => `    text = text.replace("${index}", "").strip()\n`,
        '    return text.lower()\n',
      );
    case 'many-names':
      return grow(
        ['DESCRIPTION = "Thousands of module constants"\n\n'],
        targetBytes,
        (index) =>
          `NAME_${index} = "value ${index}"\ndef read_${index}():\n    return NAME_${index}.upper()\n`,
        'def run(PluginInfo):\n    return read_0()\n',
      );
    case 'and-chains':
      return grow(
        [
          'DESCRIPTION = "Long and chains guarded by isinstance"\n\n\nclass Key:\n    def __init__(self):\n',
          '        self.value = 1\n\n    def __eq__(self, other):\n        return isinstance(other, Key)',
        ],
        targetBytes,
        (index) => ` and other.value == self.value + ${index} - ${index}`,
        '\n\n\ndef run(PluginInfo):\n    return Key() == Key()\n',
      );
    case 'resource-lists':
      return grow(
        [
          'from owtf.managers.resource import get_resources\nfrom owtf.plugin.helper import plugin_helper\n\n',
          'DESCRIPTION = "Many resource lists, each handed to CommandDump"\n\n\ndef run(PluginInfo):\n    Content = []\n',
        ],
        targetBytes,
        (index) =>
          `    resource_${index} = get_resources("Tool${index}")\n` +
          `    Content += plugin_helper.CommandDump("Test Command", "Output", resource_${index}, PluginInfo, [])\n`,
        '    return Content\n',
      );
  }
}
