import { spawnSync } from 'node:child_process';
import { closeSharedValidator, validate } from './validator';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');
const PLUGIN = 'DESCRIPTION = "Test plugin"\n\ndef run(PluginInfo):\n    return None\n';

afterAll(() => closeSharedValidator());

/** Where the analyser found a non-ASCII identifier: [line, column], as violations give them. */
async function identifierFindings(source: string): Promise<Array<[number, number]>> {
  const { violations } = await validate(utf8(source));
  return violations
    .filter((v) => v.rule === 'encoding' && v.message.startsWith('Identifier '))
    .map((v) => [v.line, v.column]);
}

/**
 * CPython reads identifiers through NFKC and draws them from every script, so a reviewer can be
 * shown one name where Python runs another. Refused: a name NFKC changes, one mixing scripts,
 * one that looks like an ASCII name or another name of the program; strings and comments may
 * hold any text, and names in one script are names.
 */
describe('identifiers a reviewer would misread', () => {
  const refusal = (name: string, problem: string) =>
    `Identifier '${name}' ${problem}: a reviewer would read another name than the one Python runs`;

  it.each([
    ['a fullwidth name', '\uff44\uff41\uff54\uff41', "is read by Python as 'data'"],
    ['a ligature', '\ufb01le', "is read by Python as 'file'"],
    ['a Cyrillic letter in a Latin name', 'ur\u0430', 'mixes Cyrillic and Latin letters'],
    ['a Greek letter in a Latin name', 'x_\u03bb', 'mixes Greek and Latin letters'],
    ['a Cyrillic name drawn like an ASCII one', '\u0430\u0440\u0435', "looks like 'ape'"],
    ["Latin's dotless i", 'f\u0131le', "looks like 'file'"],
    ['a combining grapheme joiner', 'data\u034f', 'holds U+034F, which draws nothing'],
    ['a variation selector', 'd\ufe0fata', 'holds U+FE0F, which draws nothing'],
    ['a Hangul filler alone', '\u3164', 'holds U+3164, which draws nothing'],
  ])('refuses %s, saying what it is', async (_label, name, problem) => {
    await expect(validate(utf8(`${PLUGIN}${name} = 1\n`))).resolves.toEqual({
      ok: false,
      violations: [{ rule: 'encoding', message: refusal(name, problem), line: 5, column: 1 }],
    });
  });

  it('refuses two names of one script that look alike, at each use', async () => {
    const source = `${PLUGIN}\u0441\u043b\u043e\u0432\u043e = 1\n\u0441\u043b\u043e\u0432\u03bf = 2\n`;
    const result = await validate(utf8(source));
    expect(result.violations).toEqual([
      expect.objectContaining({ line: 5, message: refusal('слово', "looks like 'словο'") }),
      expect.objectContaining({ line: 6 }),
    ]);
  });

  it('accepts names in one script: étiquette, λ, слово, 検出けっか, नाम', async () => {
    const source = `${PLUGIN}étiquette = 1\nλ = 2\nслово = 3\n検出けっか = 4\nनाम = 5\n`;
    await expect(validate(utf8(source))).resolves.toEqual({ ok: true, violations: [] });
  });

  it.each([
    ['an attribute', 'PluginInfo.\uff47et', 4, 24],
    ['an f-string replacement field', 'f"é {\uff50}"', 4, 18],
    ['an f-string format spec field', 'f"{PluginInfo:>{\uff57}}"', 4, 29],
    ['a lambda parameter', 'lambda \u0445=1: 0', 4, 20],
    ['code after a string holding #', '"#" + \u0445', 4, 19],
  ])('finds one in %s', async (_label, expression, line, column) => {
    const source = `DESCRIPTION = "x"\n\ndef run(PluginInfo):\n    return [${expression}]\n`;
    expect(await identifierFindings(source)).toContainEqual([line, column]);
  });

  it('accepts any text in strings, f-string text, docstrings and comments', async () => {
    const source =
      '# Auteur : José, ﬁchier ｅ\n' +
      'DESCRIPTION = "Résumé ﬁ ｅ λ"\n\n' +
      'def run(PluginInfo):\n' +
      '    """Docstring é ｘ."""\n' +
      '    x = f"é {PluginInfo!r:>{len(\'é\')}} ² # ｘ"  # commentaire ｘ\n' +
      '    y = ("é"  # ｘ\n         "ｘ")\n' +
      '    return [x, y, f"""é\n{PluginInfo=}\n ｘ {len("ｘ")} # ｘ\n"""]\n';
    await expect(validate(utf8(source))).resolves.toEqual({ ok: true, violations: [] });
  });

  /**
   * Differential: on programs with look-alike letters in names, and any text in strings,
   * comments and string concatenations, the analyser (which tells code by CPython's tree) and
   * CPython's tokenize module find the same non-ASCII names at the same places. (3.11's tokenize sees an f-string
   * as one token, so names inside f-strings are covered by the cases above, not here.)
   */
  it('refuses the non-ASCII names CPython tokenize finds, at the same places, in 400 generated programs', async () => {
    let seed = 22;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(items: readonly T[]): T => items[random(items.length)];
    // Letters that make every name holding them one to refuse; é and λ stay in strings and comments.
    const letters = ['a', 'b', 'x', '\u0430', '\uff58', '\ufb01', '_'];
    const name = () => {
      let result = pick(['a', 'b', 'n', '\u0430', '\uff58', '\ufb01', '_']);
      for (let i = random(4); i > 0; i -= 1) result += pick(letters);
      return result;
    };
    const text = () => pick(['', 'é', '#', 'ｘ # y', "l'été", '\\"λ\\"', 'a ﬁ b']);
    const lines = [
      () => `${name()} = "${text()}"  # ${text()}`,
      () => `${name()} = (${name()}, "${text()}")`,
      () => `${name()} = ("${text()}"  # ${text()}\n    "${text()}")`,
      () => `${name()} = """${text()}\n${text()} # ${text()}\n"""`,
      () => `def ${name()}(${name()}=${name()}, *${name()}):  # ${text()}\n    return "${text()}"`,
      () => `${name()} = ${name()}.${name()} + \\\n    ${name()}`,
      () => `# ${text()} ${name()}`,
      () => `${name()} = f"${text().replace(/#/g, '')}"`,
    ];
    const programs = Array.from({ length: 400 }, () =>
      Array.from({ length: 1 + random(6) }, () => pick(lines)())
        .join('\n')
        .concat('\n'),
    );
    const reference = spawnSync(
      'python3',
      [
        '-I',
        '-c',
        [
          'import io, json, sys, tokenize',
          'out = []',
          'for source in json.load(sys.stdin):',
          '    found = []',
          '    for token in tokenize.generate_tokens(io.StringIO(source).readline):',
          '        if token.type == tokenize.NAME and not token.string.isascii():',
          '            found.append([token.start[0], token.start[1] + 1])',
          '    out.append(found)',
          'print(json.dumps(out))',
        ].join('\n'),
      ],
      { input: JSON.stringify(programs), encoding: 'utf8' },
    );
    expect(reference.status).toBe(0);
    const expected = JSON.parse(reference.stdout) as Array<Array<[number, number]>>;
    let withNames = 0;
    for (const [index, program] of programs.entries()) {
      const found = await identifierFindings(program);
      expect({ program, found }).toEqual({ program, found: expected[index] });
      if (found.length > 0) withNames += 1;
    }
    // The generator must exercise both outcomes.
    expect(withNames).toBeGreaterThan(50);
    expect(withNames).toBeLessThan(400);
  });
});
