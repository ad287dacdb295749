/**
 * Generated worst cases of the analyser (issue 32): each repeats one pattern that a rule used to
 * judge in time quadratic in the file, to about `targetBytes`. The bench times them and a spec
 * checks that none is refused for time; python3 -m cProfile on their output finds the next one.
 */
export type WorstCase =
  | 'methods-through-class'
  | 'class-constant-templates'
  | 'private-reads-on-parameter'
  | 'template-classes'
  | 'file-reads-through-helper'
  | 'stores-in-loops-over-a-list'
  | 'class-chain';

export const WORST_CASES: readonly WorstCase[] = [
  'methods-through-class',
  'class-constant-templates',
  'private-reads-on-parameter',
  'template-classes',
  'file-reads-through-helper',
  'stores-in-loops-over-a-list',
  'class-chain',
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
      // Half methods that use private names, half reads of them through the class (`Scanner.check_7`).
      const methods = Math.max(1, Math.floor(targetBytes / 2 / 80));
      const head = ['DESCRIPTION = "Many reads of methods through a class"\n\n\nclass Scanner:\n'];
      for (let index = 0; index < methods; index++) {
        head.push(
          `    def check_${index}(self, value):\n        self._seen_${index} = value\n        return self._seen_${index}\n\n`,
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
    case 'class-constant-templates': {
      const constants = Math.max(1, Math.floor(targetBytes / 2 / 45));
      const head = ['DESCRIPTION = "Thousands of class-constant templates"\n\n\nclass Report:\n'];
      for (let index = 0; index < constants; index++) {
        head.push(`    ROW_${index} = "{host} {port} row ${index} {status}"\n`);
      }
      head.push('\n    def render(self, host, port, status):\n        out = []\n');
      return grow(
        head,
        targetBytes,
        (index) =>
          `        out.append(self.ROW_${index % constants}.format(host=host, port=port, status=status))\n`,
        '        return out\n\n\ndef run(PluginInfo):\n    return Report().render("h", 1, "ok")\n',
      );
    }
    case 'private-reads-on-parameter':
      return grow(
        [
          'DESCRIPTION = "Private reads on a parameter"\n\n\nclass Finding:\n    def __init__(self, key):\n',
          '        self._key = key\n        self._rank = 0\n\n    def merge(self, other):\n',
          '        if not isinstance(other, Finding):\n            return None\n        total = 0\n',
        ],
        targetBytes,
        (index) => `        total += len(other._key) + other._rank + ${index}\n`,
        '        return total\n\n\ndef run(PluginInfo):\n    return Finding("a").merge(Finding("b"))\n',
      );
    case 'template-classes':
      return grow(
        ['DESCRIPTION = "Many classes, each with a template constant"\n\n'],
        targetBytes,
        (index) =>
          `class Row${index}:\n    TEMPLATE = "{host} row ${index}"\n\n    def render(self, host):\n        return self.TEMPLATE.format(host=host)\n\n\n`,
        'def run(PluginInfo):\n    return Row0().render("h")\n',
      );
    case 'file-reads-through-helper':
      return grow(
        [
          'DESCRIPTION = "Many reads through one helper, called from many places"\n\n\ndef read(path):\n',
          '    open(path, "rb").close()\n'.repeat(400),
          '    return path\n\n\ndef run(PluginInfo):\n',
        ],
        targetBytes,
        (index) => `    read(PluginInfo["wordlist_${index}"])\n    read("words_${index}.txt")\n`,
        '    return None\n',
      );
    case 'stores-in-loops-over-a-list':
      // Door 3: each store on a loop variable proves the list holds only plugin objects, which
      // scans every read of the list.
      return grow(
        [
          'DESCRIPTION = "Stores in many loops over one list"\n\n\nclass Finding:\n    def __init__(self):\n',
          '        self.score = 0\n\n\ndef run(PluginInfo):\n    findings = [Finding(), Finding()]\n',
        ],
        targetBytes,
        (index) =>
          `    n${index} = len(findings)\n    for item${index} in findings:\n        item${index}.score = ${index}\n`,
        '    return None\n',
      );
    case 'class-chain':
      // Each class derives from the one before and is built: each build asked its whole ancestry.
      return grow(
        [
          'DESCRIPTION = "A chain of classes, each built once"\n\nLEVELS = []\n\n\nclass Level0:\n    depth = 0\n\n\n',
        ],
        targetBytes,
        (index) =>
          `class Level${index + 1}(Level${index}): depth = ${index + 1}\nLEVELS.append(Level${index + 1}())\n`,
        'def run(PluginInfo):\n    return [level.depth for level in LEVELS]\n',
      );
  }
}
