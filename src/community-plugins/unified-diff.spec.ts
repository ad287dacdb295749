import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unifiedDiff } from './unified-diff';

/** GNU diff's own answer, for comparison. */
function gnuDiff(before: string, after: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'diff-'));
  writeFileSync(join(dir, 'a'), before);
  writeFileSync(join(dir, 'b'), after);
  try {
    execFileSync('diff', ['-u', '--label', 'a/p.py', '--label', 'b/p.py', join(dir, 'a'), join(dir, 'b')]);
    return '';
  } catch (error) {
    return (error as { stdout: Buffer }).stdout.toString();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const lines = (count: number, change: (index: number) => string | null = () => null) =>
  Array.from({ length: count }, (_, index) => change(index) ?? `line ${index}`).join('\n') + '\n';

describe('unifiedDiff', () => {
  const labels = { before: 'a/p.py', after: 'b/p.py' };

  it('is empty for equal texts', () => {
    expect(unifiedDiff('x\n', 'x\n', labels)).toBe('');
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
  ])('matches diff -u: %s', (_name, before, after) => {
    expect(unifiedDiff(before, after, labels)).toBe(gnuDiff(before, after));
  });
});
