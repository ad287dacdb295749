/**
 * The one byte range of a `Range` header (RFC 9110 14.1.2) over a representation of `length`
 * bytes: `bytes=first-last`, `bytes=first-` or `bytes=-suffix`.
 * - `null`: no range to serve: no header, another unit, a malformed or multi-part one (which a
 *   server may answer whole, RFC 9110 14.2), so the answer is the whole representation;
 * - `'unsatisfiable'`: well formed but outside the representation: 416;
 * - else the first and last byte offsets, inclusive, clamped to the representation.
 */
export function byteRange(
  header: string | undefined,
  length: number,
): { first: number; last: number } | 'unsatisfiable' | null {
  if (header === undefined) return null;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || length === 0) return 'unsatisfiable';
    return { first: Math.max(0, length - suffix), last: length - 1 };
  }
  const first = Number(match[1]);
  if (match[2] !== '' && Number(match[2]) < first) return null;
  if (first >= length) return 'unsatisfiable';
  const last = match[2] === '' ? length - 1 : Number(match[2]);
  return { first, last: Math.min(last, length - 1) };
}
