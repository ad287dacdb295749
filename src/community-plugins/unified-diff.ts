type Edit = { kind: ' ' | '-' | '+'; line: string };

/** Beyond this many changed lines the diff is "all removed, all added": Myers' trace grows with it. */
const MAX_EDIT_DISTANCE = 4000;
const CONTEXT = 3;

/**
 * The unified diff (`diff -u` style, 3 lines of context) of `after` against `before`, with
 * `--- a/<name>` and `+++ b/<name>` headers; empty when they are equal. An absent `before`
 * (a first version) diffs against nothing.
 */
export function unifiedDiff(
  before: string,
  after: string,
  labels: { before: string; after: string },
): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const edits = diffLines(a, b);
  if (edits.every((edit) => edit.kind === ' ')) return '';
  const out = [`--- ${labels.before}`, `+++ ${labels.after}`];
  let index = 0;
  while (index < edits.length) {
    while (index < edits.length && edits[index].kind === ' ') index += 1;
    if (index >= edits.length) break;
    const start = Math.max(0, index - CONTEXT);
    // Extend the hunk while the next change is within two contexts of the last one.
    let end = index;
    let lastChange = index;
    while (end < edits.length) {
      if (edits[end].kind !== ' ') lastChange = end;
      else if (end - lastChange > 2 * CONTEXT) break;
      end += 1;
    }
    end = Math.min(edits.length, lastChange + CONTEXT + 1);
    let oldLine = 1;
    let newLine = 1;
    for (let i = 0; i < start; i += 1) {
      if (edits[i].kind !== '+') oldLine += 1;
      if (edits[i].kind !== '-') newLine += 1;
    }
    const hunk = edits.slice(start, end);
    const oldCount = hunk.filter((edit) => edit.kind !== '+').length;
    const newCount = hunk.filter((edit) => edit.kind !== '-').length;
    out.push(`@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@`);
    for (const edit of hunk) out.push(`${edit.kind}${edit.line}`);
    index = end;
  }
  return out.join('\n') + '\n';
}

/** `diff -u` writes an empty range as the line before it. */
const range = (line: number, count: number) =>
  count === 0 ? `${line - 1},0` : count === 1 ? `${line}` : `${line},${count}`;

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Myers' O((N+M)D) shortest edit script, read back from its trace. */
function diffLines(a: string[], b: string[]): Edit[] {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d += 1) {
    trace.push(v.slice());
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1])
          ? v[offset + k + 1]
          : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
    v = next;
  }
  if (!found) {
    return [
      ...a.map((line) => ({ kind: '-' as const, line })),
      ...b.map((line) => ({ kind: '+' as const, line })),
    ];
  }
  trace.push(v);
  const edits: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 2; d >= 0; d -= 1) {
    const previous = trace[d];
    const k = x - y;
    const prevK =
      k === -d || (k !== d && previous[offset + k - 1] < previous[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = previous[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      edits.push({ kind: ' ', line: a[x - 1] });
      x -= 1;
      y -= 1;
    }
    if (d > 0) {
      if (x === prevX) edits.push({ kind: '+', line: b[prevY] });
      else edits.push({ kind: '-', line: a[prevX] });
    }
    x = prevX;
    y = prevY;
  }
  return edits.reverse();
}
