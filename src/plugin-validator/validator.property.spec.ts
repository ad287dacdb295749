import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { Rule } from './rules';
import type { ValidationResult } from './types';
import { closeSharedValidator, programViews, validate } from './validator';

const FIXTURES = path.join(__dirname, '../../test/fixtures/plugins');

function readCorpus(kind: 'benign' | 'outside-profile' | 'hostile'): Buffer[] {
  const dir = path.join(FIXTURES, kind);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.py'))
    .map((name) => readFileSync(path.join(dir, name)));
}

const benign = readCorpus('benign');
const corpus = [...benign, ...readCorpus('outside-profile'), ...readCorpus('hostile')];

/**
 * The answer is always well formed, `ok` means exactly "no violations", and it is a verdict:
 * a validator that failed on the input (`internal-error`) answers well formed too, so that
 * alone would let a validator that crashes on everything pass.
 */
function expectWellFormed(result: ValidationResult): void {
  expect(result.violations.filter((violation) => violation.rule === Rule.internalError)).toEqual([]);
  expect(typeof result.ok).toBe('boolean');
  expect(Array.isArray(result.violations)).toBe(true);
  expect(result.ok).toBe(result.violations.length === 0);
  for (const violation of result.violations) {
    expect(violation.rule).toMatch(/^[a-z]+(-[a-z]+)*$/);
    expect(violation.message.length).toBeGreaterThan(0);
    expect(Number.isInteger(violation.line) && violation.line >= 1).toBe(true);
    expect(Number.isInteger(violation.column) && violation.column >= 1).toBe(true);
  }
}

type Mutation =
  | { kind: 'flip'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'truncate'; at: number };

const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 8 }),
      fc.constantFrom(
        ...['(', '"""', '\\', '\r', '{', '#', ':\n    ', 'eval', '\xef\xbb\xbf'].map((text) =>
          Buffer.from(text, 'latin1'),
        ),
      ),
    ),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);

function mutate(source: Buffer, mutations: Mutation[]): Buffer {
  let bytes = Buffer.from(source);
  for (const mutation of mutations) {
    const at = bytes.length === 0 ? 0 : mutation.at % (bytes.length + 1);
    switch (mutation.kind) {
      case 'flip':
        if (at < bytes.length) bytes[at] = mutation.byte;
        break;
      case 'insert':
        bytes = Buffer.concat([bytes.subarray(0, at), mutation.bytes, bytes.subarray(at)]);
        break;
      case 'delete':
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + mutation.length)]);
        break;
      case 'truncate':
        bytes = bytes.subarray(0, at);
        break;
    }
  }
  return bytes;
}

afterAll(() => closeSharedValidator());

describe('validate (properties)', () => {
  it('answers well-formed results for arbitrary bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), async (bytes) => {
        expectWellFormed(await validate(Buffer.from(bytes)));
      }),
      { numRuns: 300 },
    );
  });

  it('answers well-formed results for arbitrary text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 2048 }), async (text) => {
        expectWellFormed(await validate(Buffer.from(text, 'utf8')));
      }),
      { numRuns: 300 },
    );
  });

  it('answers well-formed results for mutated corpus plugins', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...corpus),
        fc.array(mutationArbitrary, { minLength: 1, maxLength: 6 }),
        async (source, mutations) => {
          expectWellFormed(await validate(mutate(source, mutations)));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('finds an eval call inserted before any statement of a benign plugin, by the rule that forbids it', async () => {
    // Without a BOM: the validator drops it, so columns are counted without it.
    const texts = benign.map((source) => source.toString('utf8').replace(/^\uFEFF/, ''));
    const views = (await programViews(benign)) as Array<{
      statements: Array<[string, number, number, number, number, number]>;
    }>;
    const insertionPoints = texts.map((text, index) => {
      const lines = text.split('\n');
      const inClassBody = new Set<unknown>();
      const enclosing: string[] = [];
      for (const statement of views[index].statements) {
        const depth = statement[5];
        if (depth > 0 && enclosing[depth - 1] === 'ClassDef') inClassBody.add(statement);
        enclosing[depth] = statement[0];
      }
      // The profile's imports stay the module's first statements: an eval goes below them.
      const lastImport = Math.max(
        0,
        ...views[index].statements.filter(([type]) => /^Import/.test(type)).map(([, line]) => line),
      );
      // Every statement CPython sees: an eval inserted on its line, at its indentation, keeps
      // the file valid Python (not before an elif, nor between a decorator and its def), so
      // only the eval can be what is found.
      return (
        views[index].statements
          .filter(([, line]) => line > lastImport)
          // Nor into a class body: it holds methods, constants and a docstring only.
          .filter((statement) => !inClassBody.has(statement))
          .filter(([, line]) => {
            const own = lines[line - 1].trim();
            const before = (lines[line - 2] ?? '').trim();
            return !/^(elif|else)\b/.test(own) && !before.startsWith('@') && !before.endsWith(')');
          })
          .map(([, line, column]) => ({ row: line - 1, column }))
      );
    });
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: benign.length - 1 }), fc.nat(), async (fileIndex, pointSeed) => {
        const points = insertionPoints[fileIndex];
        const { row, column } = points[pointSeed % points.length];
        const lines = texts[fileIndex].split('\n');
        const indent = lines[row].slice(0, column);
        lines.splice(row, 0, `${indent}eval("1")`);
        const result = await validate(Buffer.from(lines.join('\n'), 'utf8'));
        expectWellFormed(result);
        expect(result.violations).toEqual([
          {
            rule: Rule.forbiddenName,
            message: "Builtin 'eval' is outside the plugin profile: parse the data (json.loads, int(), ...)",
            line: row + 1,
            column: column + 1,
          },
        ]);
      }),
      { numRuns: 200 },
    );
  });
});
