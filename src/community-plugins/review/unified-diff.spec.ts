import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diffHunks, unifiedDiff } from './unified-diff';

const labels = { before: 'a/p.py', after: 'b/p.py' };

/** Runs `work` in a temporary directory that is removed afterwards. */
function inTemporaryDirectory<T>(work: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'diff-'));
  try {
    return work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** GNU diff's own answer (exit 1 means "they differ"). */
function gnuDiff(before: string, after: string, options: string[] = []): string {
  return inTemporaryDirectory((dir) => {
    writeFileSync(join(dir, 'a'), before);
    writeFileSync(join(dir, 'b'), after);
    try {
      execFileSync('diff', ['-u', ...options, '--label', 'a/p.py', '--label', 'b/p.py', 'a', 'b'], {
        cwd: dir,
      });
      return '';
    } catch (error) {
      return (error as { stdout: Buffer }).stdout.toString();
    }
  });
}

/** What GNU patch makes of `before` with `diff` applied. */
function patched(before: string, diff: string): string {
  return inTemporaryDirectory((dir) => {
    writeFileSync(join(dir, 'a'), before);
    writeFileSync(join(dir, 'p.diff'), diff);
    execFileSync('patch', ['--quiet', '--batch', '-o', 'out', 'a', 'p.diff'], { cwd: dir });
    return readFileSync(join(dir, 'out'), 'utf8');
  });
}

/** Lines removed plus lines added: the length of the edit script. */
const editCount = (diff: string) =>
  diff.split('\n').filter((line) => /^[-+]/.test(line) && !/^(---|\+\+\+) /.test(line)).length;

const lines = (count: number, change: (index: number) => string | null = () => null) =>
  Array.from({ length: count }, (_, index) => change(index) ?? `line ${index}`).join('\n') + '\n';

/** A deterministic generator, so a failing case can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe('unifiedDiff', () => {
  it('is empty for equal texts, without a search', () => {
    expect(unifiedDiff('x\n', 'x\n', labels)).toEqual({ diff: '', approximate: false });
    // No budget at all still answers equal texts exactly.
    expect(diffHunks(lines(1000), lines(1000), 0)).toEqual({ hunks: '', approximate: false });
  });

  it.each([
    ['one line changed in the middle', lines(30), lines(30, (i) => (i === 15 ? 'changed' : null))],
    ['two hunks far apart', lines(40), lines(40, (i) => (i === 2 || i === 35 ? `new ${i}` : null))],
    [
      'close changes merged into one hunk',
      lines(40),
      lines(40, (i) => (i === 10 || i === 15 ? `new ${i}` : null)),
    ],
    ['lines added at the end', lines(5), lines(8)],
    ['lines removed at the start', lines(8), lines(8).split('\n').slice(3).join('\n')],
    ['against nothing (a first version)', '', lines(4)],
    ['everything removed', lines(4), ''],
    ['a last line without a line break', 'a\nb\nc', 'a\nB\nc'],
    ['a line break added at the end', 'a\nb', 'a\nb\n'],
    ['a line break removed at the end', 'a\nb\n', 'a\nb'],
    ['CRLF lines', 'a\r\nb\r\n', 'a\r\nc\r\n'],
  ])('matches diff -u: %s', (_name, before, after) => {
    const { diff, approximate } = unifiedDiff(before, after, labels);
    expect(diff).toBe(gnuDiff(before, after));
    expect(approximate).toBe(false);
    expect(diff === '' ? before : patched(before, diff)).toBe(after);
  });

  it('finds a shortest edit script that patch applies, on 300 random pairs', () => {
    const next = random(42);
    const text = (count: number) =>
      Array.from({ length: count }, () => `l${Math.floor(next() * 6)}\n`).join('') +
      (next() < 0.2 ? 'tail' : '');
    for (let i = 0; i < 300; i += 1) {
      const before = text(Math.floor(next() * 30));
      const after = text(Math.floor(next() * 30));
      const { diff, approximate } = unifiedDiff(before, after, labels);
      expect(approximate).toBe(false);
      // As short as GNU diff's minimal script (which one of the shortest may differ).
      expect([i, editCount(diff)]).toEqual([i, editCount(gnuDiff(before, after, ['--minimal']))]);
      expect(diff === '' ? before : patched(before, diff)).toBe(after);
    }
  });

  it('past its budget says it is approximate and still turns one text into the other', () => {
    const before = lines(400, (i) => `a ${i}`);
    const after = lines(400, (i) => (i % 3 === 0 ? `b ${i}` : `a ${i}`));
    const exact = unifiedDiff(before, after, labels);
    const coarse = unifiedDiff(before, after, labels, 100);
    expect(exact.approximate).toBe(false);
    expect(coarse.approximate).toBe(true);
    expect(editCount(coarse.diff)).toBeGreaterThan(editCount(exact.diff));
    expect(patched(before, coarse.diff)).toBe(after);
    expect(patched(before, exact.diff)).toBe(after);
  });

  it('keeps common leading and trailing lines out of the search', () => {
    // Everything but one line in the middle is common: no budget is needed for that.
    const before = lines(5000);
    const after = lines(5000, (i) => (i === 2500 ? 'changed' : null));
    const { hunks, approximate } = diffHunks(before, after, 10);
    expect(approximate).toBe(false);
    expect(hunks).toBe(gnuDiff(before, after).split('\n').slice(2).join('\n'));
  });

  it('diffs 20,000 lines with 2,000 scattered changes exactly within the default budget', () => {
    const before = lines(20_000, (i) => `x_${i} = 1`);
    const after = lines(20_000, (i) => (i % 10 === 3 ? `y_${i} = 2` : `x_${i} = 1`));
    const { diff, approximate } = unifiedDiff(before, after, labels);
    expect(approximate).toBe(false);
    expect(diff).toBe(gnuDiff(before, after));
  });
});
