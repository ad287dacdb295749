const CONTEXT = 3;

/**
 * Work (diagonals visited plus lines compared) allowed for one diff: about 0.4 s of a thread
 * on the bench machine (about 25 ns a unit). A 20,000-line file with 2,000 scattered one-line
 * changes needs 8.3 million; two unrelated 20,000-line files would need over a billion.
 */
export const DIFF_WORK_BUDGET = 16_000_000;

/** The hunks of a unified diff, without its two header lines. */
export interface DiffHunks {
  /** `@@ ... @@` hunks with 3 lines of context, as `diff -u` writes them; empty when equal. */
  hunks: string;
  /**
   * The work budget ran out: some differing stretch is shown as all removed then all added,
   * which is still a correct diff (it turns one text into the other), just not the shortest.
   */
  approximate: boolean;
}

/** `--- <before>` and `+++ <after>` over the hunks; nothing when there are none. */
export const withHeaders = (hunks: string, labels: { before: string; after: string }): string =>
  hunks === '' ? '' : `--- ${labels.before}\n+++ ${labels.after}\n${hunks}`;

/**
 * The unified diff (`diff -u` style) of `after` against `before`, with `--- <before>` and
 * `+++ <after>` headers; empty when they are equal. An empty `before` (a first version)
 * diffs against nothing.
 */
export function unifiedDiff(
  before: string,
  after: string,
  labels: { before: string; after: string },
  budget = DIFF_WORK_BUDGET,
): { diff: string; approximate: boolean } {
  const { hunks, approximate } = diffHunks(before, after, budget);
  return { diff: withHeaders(hunks, labels), approximate };
}

export function diffHunks(before: string, after: string, budget = DIFF_WORK_BUDGET): DiffHunks {
  if (before === after) return { hunks: '', approximate: false };
  const a = splitLines(before);
  const b = splitLines(after);
  const [aIds, bIds] = internLines(a, b);
  const removed = new Uint8Array(a.length);
  const added = new Uint8Array(b.length);
  const approximate = !markChanges(aIds, bIds, removed, added, budget);
  return { hunks: formatHunks(a, b, removed, added), approximate };
}

/** Lines with their `\n`; a last line without one stays without (and so differs from one with it). */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The same number for equal lines, so the search compares integers. */
function internLines(a: string[], b: string[]): [Int32Array, Int32Array] {
  const ids = new Map<string, number>();
  const intern = (lines: string[]) => {
    const out = new Int32Array(lines.length);
    for (let i = 0; i < lines.length; i += 1) {
      let id = ids.get(lines[i]);
      if (id === undefined) {
        id = ids.size;
        ids.set(lines[i], id);
      }
      out[i] = id;
    }
    return out;
  };
  return [intern(a), intern(b)];
}

/**
 * Marks the lines of `a` removed and of `b` added by a shortest edit script: Myers' linear-space
 * divide and conquer (the middle snake of "An O(ND) Difference Algorithm", section 4b), with
 * common leading and trailing lines taken off each part first. Memory is two arrays of N+M
 * integers; a stretch whose search would overrun `budget` is marked all removed and all added.
 * Returns false when that happened.
 */
function markChanges(
  a: Int32Array,
  b: Int32Array,
  removed: Uint8Array,
  added: Uint8Array,
  budget: number,
): boolean {
  const size = a.length + b.length + 3;
  const forward = new Int32Array(size);
  const backward = new Int32Array(size);
  let left = budget;
  let exact = true;
  // Parts still to compare, as [aLo, aHi, bLo, bHi]; a stack rather than recursion.
  const parts: number[] = [0, a.length, 0, b.length];
  while (parts.length > 0) {
    let bHi = parts.pop()!;
    let bLo = parts.pop()!;
    let aHi = parts.pop()!;
    let aLo = parts.pop()!;
    while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) {
      aLo += 1;
      bLo += 1;
    }
    while (aLo < aHi && bLo < bHi && a[aHi - 1] === b[bHi - 1]) {
      aHi -= 1;
      bHi -= 1;
    }
    if (aLo === aHi || bLo === bHi) {
      removed.fill(1, aLo, aHi);
      added.fill(1, bLo, bHi);
      continue;
    }
    const split = middleSnake(a, b, aLo, aHi, bLo, bHi, forward, backward, left);
    left -= split.work;
    const [x, y] = [aLo + split.x, bLo + split.y];
    if (!split.found || (x === aLo && y === bLo) || (x === aHi && y === bHi)) {
      exact = false;
      removed.fill(1, aLo, aHi);
      added.fill(1, bLo, bHi);
      continue;
    }
    parts.push(aLo, x, bLo, y, x, aHi, y, bHi);
  }
  return exact;
}

const NONE = -1;

/**
 * A point on a shortest edit path of a[aLo..aHi) to b[bLo..bHi), strictly inside it (both
 * are non-empty and differ at both ends), relative to (aLo, bLo). `forward[k]` is the furthest
 * x reached on diagonal k = x - y from the start, `backward[c]` the same from the end on the
 * reversed texts; the paths meet on the first d at which they overlap.
 */
function middleSnake(
  a: Int32Array,
  b: Int32Array,
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
  forward: Int32Array,
  backward: Int32Array,
  budget: number,
): { found: boolean; x: number; y: number; work: number } {
  const n = aHi - aLo;
  const m = bHi - bLo;
  const delta = n - m;
  const odd = (delta & 1) !== 0;
  // Diagonals run from -m to n; one more each side is read as "not reached".
  const offset = m + 1;
  forward.fill(NONE, 0, n + m + 3);
  backward.fill(NONE, 0, n + m + 3);
  let work = 0;
  const max = Math.ceil((n + m) / 2);
  for (let d = 0; d <= max; d += 1) {
    if (work > budget) return { found: false, x: 0, y: 0, work };
    const kLo = d <= m ? -d : -m + ((d - m) & 1);
    const kHi = d <= n ? d : n - ((d - n) & 1);
    for (let k = kLo; k <= kHi; k += 2) {
      let x = d === 0 ? 0 : step(forward, offset + k, k, n, m);
      if (x !== NONE) {
        let y = x - k;
        const start = x;
        while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
          x += 1;
          y += 1;
        }
        work += x - start;
      }
      work += 1;
      forward[offset + k] = x;
      const c = delta - k;
      if (odd && x !== NONE && c >= -(d - 1) && c <= d - 1 && c >= -m && c <= n) {
        const back = backward[offset + c];
        if (back !== NONE && x + back >= n) return { found: true, x, y: x - k, work };
      }
    }
    for (let c = kLo; c <= kHi; c += 2) {
      let x = d === 0 ? 0 : step(backward, offset + c, c, n, m);
      if (x !== NONE) {
        let y = x - c;
        const start = x;
        while (x < n && y < m && a[aHi - 1 - x] === b[bHi - 1 - y]) {
          x += 1;
          y += 1;
        }
        work += x - start;
      }
      work += 1;
      backward[offset + c] = x;
      const k = delta - c;
      if (!odd && x !== NONE && k >= -d && k <= d && k >= -m && k <= n) {
        const front = forward[offset + k];
        if (front !== NONE && x + front >= n) return { found: true, x: n - x, y: m - (x - c), work };
      }
    }
  }
  return { found: false, x: 0, y: 0, work };
}

/**
 * Where a path of one more edit starts on diagonal k: one step down from diagonal k+1 or right
 * from k-1, whichever stays in the grid and goes further (the snake along equal lines follows).
 */
function step(v: Int32Array, index: number, k: number, n: number, m: number): number {
  const down = v[index + 1];
  const right = v[index - 1];
  const fromDown = down !== NONE && down - (k + 1) < m ? down : NONE;
  const fromRight = right !== NONE && right < n ? right + 1 : NONE;
  return fromDown > fromRight ? fromDown : fromRight;
}

/**
 * `diff -u`'s hunks: changes with 3 lines of context, hunks whose contexts touch or overlap
 * merged, removals before additions within a change.
 */
function formatHunks(a: string[], b: string[], removed: Uint8Array, added: Uint8Array): string {
  // The edit script as one walk: 0 kept, 1 removed (a line of a), 2 added (a line of b).
  const kinds: number[] = [];
  for (let i = 0, j = 0; i < a.length || j < b.length;) {
    if (i < a.length && removed[i]) {
      kinds.push(1);
      i += 1;
    } else if (j < b.length && added[j]) {
      kinds.push(2);
      j += 1;
    } else {
      kinds.push(0);
      i += 1;
      j += 1;
    }
  }
  const out: string[] = [];
  // Lines of a and b before position `at` of the script, kept up to date as the walk moves on.
  let at = 0;
  let oldLine = 0;
  let newLine = 0;
  const advanceTo = (target: number) => {
    for (; at < target; at += 1) {
      if (kinds[at] !== 2) oldLine += 1;
      if (kinds[at] !== 1) newLine += 1;
    }
  };
  let index = 0;
  while (index < kinds.length) {
    while (index < kinds.length && kinds[index] === 0) index += 1;
    if (index >= kinds.length) break;
    const start = Math.max(0, index - CONTEXT);
    let lastChange = index;
    for (let end = index; end < kinds.length; end += 1) {
      if (kinds[end] !== 0) lastChange = end;
      else if (end - lastChange > 2 * CONTEXT) break;
    }
    const end = Math.min(kinds.length, lastChange + CONTEXT + 1);
    advanceTo(start);
    const [oldStart, newStart] = [oldLine, newLine];
    const body: string[] = [];
    let oldCount = 0;
    let newCount = 0;
    for (let i = start; i < end; i += 1) {
      const kind = kinds[i];
      const line = kind === 2 ? b[newStart + newCount] : a[oldStart + oldCount];
      body.push(kind === 0 ? ' ' : kind === 1 ? '-' : '+', line);
      // `diff -u` marks a last line that has no line break.
      if (!line.endsWith('\n')) body.push('\n\\ No newline at end of file\n');
      if (kind !== 2) oldCount += 1;
      if (kind !== 1) newCount += 1;
    }
    out.push(`@@ -${range(oldStart + 1, oldCount)} +${range(newStart + 1, newCount)} @@\n`, ...body);
    index = end;
  }
  return out.join('');
}

/** `diff -u` writes an empty range as the line before it. */
const range = (line: number, count: number) =>
  count === 0 ? `${line - 1},0` : count === 1 ? `${line}` : `${line},${count}`;
