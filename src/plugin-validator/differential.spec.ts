import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { closeSharedValidator, programViews } from './validator';

/**
 * The differential test of the issue: the validator's view of a program (its statements with
 * their nesting, the identifiers of each scope, how each name read in a scope resolves) against
 * CPython's own ast and symtable, computed in a separate python3 by a script that shares no
 * code with the analyser (test/helpers/python/reference-view.py). On the whole corpus and on
 * generated variants of it: whitespace, tabs, form feeds, line endings, continuations,
 * encodings, NFKC identifiers, string prefixes and escapes. Any difference fails.
 */
const FIXTURES = path.join(__dirname, '../../test/fixtures/plugins');
const REFERENCE = path.join(__dirname, '../../test/helpers/python/reference-view.py');
const VARIANTS_PER_FILE = 40;
const BATCH = 400;

const corpus: Buffer[] = ['benign', 'outside-profile', 'hostile'].flatMap((kind) =>
  readdirSync(path.join(FIXTURES, kind))
    .filter((name) => name.endsWith('.py'))
    .map((name) => readFileSync(path.join(FIXTURES, kind, name))),
);

type Transform = (text: string, random: () => number) => string;

/** Each keeps the program CPython runs the same or makes it a different valid (or invalid) one. */
const TRANSFORMS: Record<string, Transform> = {
  crlf: (text) => text.replace(/\n/g, '\r\n'),
  loneCr: (text) => text.replace(/\n/g, '\r'),
  tabs: (text) => text.replace(/^((?: {4})+)/gm, (indent) => '\t'.repeat(indent.length / 4)),
  // CPython puts `       \t` at column 8; an editor may show it at 15. Consistent or a TabError.
  sevenSpacesAndTab: (text) => text.replace(/^ {8}/gm, '       \t'),
  formFeeds: (text, random) => text.replace(/^/gm, () => (random() < 0.3 ? '\f' : '')),
  continuations: (text) => text.replace(/ = (?=\S)/g, ' = \\\n    '),
  spaces: (text, random) =>
    text.replace(/([,(=])(?=\S)/g, (sign: string) => sign + ' '.repeat(Math.floor(random() * 3))),
  trailing: (text) => text.replace(/\n/g, '  # note \t\n'),
  noFinalNewline: (text) => text.replace(/\s+$/, ''),
  nfkcIdentifiers: (text) =>
    text
      .replace(/\bPluginInfo\b/g, 'ＰluginＩnfo')
      .replace(/\bresult\b/g, 'ｒesult')
      .replace(/\bfind/g, 'ﬁnd'),
  stringForms: (text) =>
    `${text}\n_a = rb'\\x5f\\x5f' + Rb"\\N" + br'\\'\n_b = u'\\x5f\\N{LOW LINE}' "\\\n" '\\u005f'\n` +
    `_c = f"{1!r:>{2}}" F'{_b!s}' rf"\\{{x}}"\n_d = """{0.__class__}\\t"""\n`,
  codingUtf8: (text) => `# -*- coding: utf-8 -*-\n${text}`,
  codingLatin1: (text) => `# vim: set fileencoding=latin-1 :\n${text}`,
  bom: (text) => `\uFEFF${text}`,
  semicolons: (text) => text.replace(/\n(\s*)return /g, '\n$1pass; return '),
};
const NAMES = Object.keys(TRANSFORMS);

/** Deterministic: the same variants on every run (mulberry32). */
function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function variants(): Buffer[] {
  const random = prng(18);
  const result: Buffer[] = [];
  corpus.forEach((source) => {
    const text = source.toString('utf8');
    for (let index = 0; index < VARIANTS_PER_FILE; index++) {
      let variant = text;
      const count = 1 + Math.floor(random() * 3);
      for (let step = 0; step < count; step++) {
        variant = TRANSFORMS[NAMES[Math.floor(random() * NAMES.length)]](variant, random);
      }
      result.push(Buffer.from(variant, 'utf8'));
    }
  });
  return result;
}

/**
 * Small programs made of scopes, for the part of the view the corpus exercises least: how each
 * name resolves. Nested defs, classes, lambdas and comprehensions over five names, with every
 * statement that binds or declares one (assignment, del, global, nonlocal, walrus, import, for,
 * with, except, match, annotation, parameters). Many are SyntaxErrors for symtable alone (a
 * nonlocal with no binding, a global after use, a walrus in a class comprehension): the analyser
 * must refuse exactly those.
 */
function scopePrograms(count: number): Buffer[] {
  const random = prng(1811);
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  const names = ['a', 'b', 'c', 'd', 'e'];
  let serial = 0;
  const expression = (depth: number): string => {
    const name = pick(names);
    if (depth > 2) return name;
    return pick([
      name,
      `${name}.x`,
      `f(${name}, ${pick(names)})`,
      `(${name} := ${pick(names)})`,
      `[${pick(names)} for ${name} in ${expression(depth + 1)} if ${expression(depth + 1)}]`,
      `{${name}: ${expression(depth + 1)} for ${name} in ${pick(names)}}`,
      `(${expression(depth + 1)} for ${name} in ${pick(names)} for ${pick(names)} in ${expression(depth + 1)})`,
      `lambda ${name}, ${pick(names)}=${pick(names)}: ${expression(depth + 1)}`,
      `super().${name}`,
    ]);
  };
  const block = (indent: string, depth: number, inFunction: boolean): string[] => {
    const lines: string[] = [];
    const statements = 1 + Math.floor(random() * (depth > 2 ? 2 : 4));
    for (let index = 0; index < statements; index++) {
      const name = pick(names);
      const inner = indent + '    ';
      const nested = depth < 4;
      const choice = Math.floor(random() * 18);
      // Decorators, defaults, annotations and bases are read in the enclosing scope.
      const decorator = random() < 0.3 ? [`${indent}@${expression(1)}`] : [];
      if (choice === 0 && nested) {
        const parameters = names
          .filter(() => random() < 0.3)
          .map((parameter) => (random() < 0.3 ? `${parameter}: ${pick(names)}=${expression(2)}` : parameter));
        const header = `def f${serial++}(${parameters.join(', ')})${random() < 0.2 ? ` -> ${pick(names)}` : ''}:`;
        lines.push(...decorator, `${indent}${random() < 0.2 ? 'async ' : ''}${header}`);
        lines.push(...block(inner, depth + 1, true));
      } else if (choice === 1 && nested) {
        const bases = random() < 0.4 ? `(${expression(1)})` : '';
        lines.push(...decorator, `${indent}class C${serial++}${bases}:`, ...block(inner, depth + 1, false));
      } else if (choice === 2) lines.push(`${indent}global ${name}`);
      else if (choice === 3) lines.push(`${indent}nonlocal ${name}`);
      else if (choice === 4) lines.push(`${indent}del ${name}`);
      else if (choice === 5) lines.push(`${indent}import m as ${name}`);
      else if (choice === 6) lines.push(`${indent}from m import ${name}`);
      else if (choice === 7 && nested)
        lines.push(`${indent}for ${name} in ${expression(1)}:`, ...block(inner, depth + 1, inFunction));
      else if (choice === 8) lines.push(`${indent}with ${expression(1)} as ${name}:`, `${inner}pass`);
      else if (choice === 9)
        lines.push(
          `${indent}try:`,
          `${inner}pass`,
          `${indent}except E as ${name}:`,
          `${inner}${expression(1)}`,
        );
      else if (choice === 10) {
        lines.push(
          `${indent}match ${pick(names)}:`,
          `${inner}case [${name}, *${pick(names)}]:`,
          `${inner}    pass`,
        );
        lines.push(`${inner}case {'k': ${pick(names)}, **${pick(names)}}:`, `${inner}    pass`);
      } else if (choice === 11) lines.push(`${indent}${name}: int`);
      else if (choice === 12 && inFunction) lines.push(`${indent}return ${expression(0)}`);
      else if (choice === 13) lines.push(`${indent}${name} += ${expression(0)}`);
      else lines.push(`${indent}${name} = ${expression(0)}`);
    }
    return lines;
  };
  return Array.from({ length: count }, () => Buffer.from(block('', 0, false).join('\n') + '\n', 'utf8'));
}

/** CPython's own view, from a separate python3 that loads none of the analyser. */
function referenceViews(sources: Buffer[]): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-I', '-S', '-B', REFERENCE], { stdio: ['pipe', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`reference-view.py exited with ${code}`));
      else resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown[]);
    });
    child.stdin.end(JSON.stringify(sources.map((source) => source.toString('base64'))));
  });
}

interface View {
  refused?: string[];
  statements?: unknown[];
  scopes?: Array<Record<string, unknown>>;
}

/** The analyser's view without what only it records (the AST node of each scope). */
function comparable(view: View): View {
  if (view.refused) return view;
  return { statements: view.statements, scopes: view.scopes!.map(({ node: _node, ...scope }) => scope) };
}

/** Sources whose two views differ; a refusal must be one CPython agrees with. */
async function differences(
  sources: Buffer[],
): Promise<Array<{ index: number; ours: View; cpython: unknown }>> {
  const found: Array<{ index: number; ours: View; cpython: unknown }> = [];
  for (let start = 0; start < sources.length; start += BATCH) {
    const batch = sources.slice(start, start + BATCH);
    const [ours, theirs] = await Promise.all([programViews(batch), referenceViews(batch)]);
    batch.forEach((_source, offset) => {
      const view = comparable(ours[offset] as View);
      const cpython = theirs[offset];
      const agrees = view.refused
        ? // Refused as not UTF-8, or as CPython fails on it: never accepted, nothing to compare.
          ['encoding', 'too-large', 'too-deep'].some((rule) => view.refused!.includes(rule)) ||
          cpython === null
        : JSON.stringify(view) === JSON.stringify(cpython);
      if (!agrees) found.push({ index: start + offset, ours: view, cpython });
    });
  }
  return found;
}

/** Where two views part: the first statement or scope that differs (a whole view is too long to read). */
function firstDifference(ours: View, cpython: View | null): { ours: unknown; cpython: unknown } {
  if (ours.refused || cpython === null)
    return { ours: ours.refused ?? 'parsed', cpython: cpython && 'parsed' };
  for (const key of ['statements', 'scopes'] as const) {
    const a = ours[key] ?? [];
    const b = cpython[key] ?? [];
    for (let index = 0; index < Math.max(a.length, b.length); index++) {
      if (JSON.stringify(a[index]) !== JSON.stringify(b[index])) return { ours: a[index], cpython: b[index] };
    }
  }
  return { ours: 'same', cpython: 'same' };
}

afterAll(() => closeSharedValidator());

describe('the analyser against CPython (differential)', () => {
  const generated = variants();

  it(`has the whole corpus and at least 10,000 variants (${corpus.length} + ${generated.length})`, () => {
    expect(generated.length).toBeGreaterThanOrEqual(10_000);
  });

  it('sees the corpus exactly as CPython does', async () => {
    expect(await differences(corpus)).toEqual([]);
  });

  it('sees every generated variant exactly as CPython does', async () => {
    const found = await differences(generated);
    // The first few, decoded, say what went wrong; the count says how much.
    expect({
      count: found.length,
      first: found.slice(0, 3).map(({ index, ours, cpython }) => ({
        source: generated[index].toString('utf8').slice(0, 400),
        ...firstDifference(ours, cpython as View | null),
      })),
    }).toEqual({ count: 0, first: [] });
  }, 600_000);

  it('resolves every name of 3,000 generated scope programs as the symtable of CPython does', async () => {
    const programs = scopePrograms(3_000);
    const found = await differences(programs);
    expect({
      count: found.length,
      first: found.slice(0, 3).map(({ index, ours, cpython }) => ({
        source: programs[index].toString('utf8'),
        ...firstDifference(ours, cpython as View | null),
      })),
    }).toEqual({ count: 0, first: [] });
  }, 600_000);

  it('fails on a difference: a tab read as eight columns is another program', async () => {
    const source = Buffer.from('DESCRIPTION = "x"\nif True:\n\tx = 1\ndef run(PluginInfo):\n\treturn x\n');
    const expanded = Buffer.from(source.toString('utf8').replace(/\t/g, '        '));
    const [ours] = await programViews([source]);
    const [cpythonOfExpanded] = await referenceViews([expanded]);
    expect(JSON.stringify(comparable(ours as View))).not.toEqual(JSON.stringify(cpythonOfExpanded));
  });
});
