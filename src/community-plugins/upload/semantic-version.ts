/**
 * Semantic-version order for the versions plugins carry (VERSION_PATTERN): an optional `v`,
 * up to four numeric parts (missing ones are 0, so `1.2` = `1.2.0`), then a pre-release after
 * `-` (lower than the release) or build metadata after `+` (ignored), as semver.org orders them.
 */
export function compareVersions(a: string, b: string): number {
  const left = parse(a);
  const right = parse(b);
  for (let index = 0; index < 4; index += 1) {
    const difference = (left.numbers[index] ?? 0) - (right.numbers[index] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  if (left.pre === null || right.pre === null) {
    if (left.pre === right.pre) return 0;
    return left.pre === null ? 1 : -1;
  }
  return comparePre(left.pre, right.pre);
}

function parse(version: string): { numbers: number[]; pre: string[] | null } {
  const match = /^v?([0-9.]+)(?:-([^+]*))?(?:\+.*)?$/.exec(version.trim());
  const core = match?.[1] ?? '0';
  const numbers = core.split('.').map((part) => Number(part) || 0);
  const pre = match?.[2] ? match[2].split('.') : null;
  return { numbers, pre };
}

function comparePre(left: string[], right: string[]): number {
  for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
    const a = left[index];
    const b = right[index];
    if (a === undefined) return -1;
    if (b === undefined) return 1;
    const aNumeric = /^\d+$/.test(a);
    const bNumeric = /^\d+$/.test(b);
    if (aNumeric && bNumeric) {
      if (Number(a) !== Number(b)) return Math.sign(Number(a) - Number(b));
    } else if (aNumeric !== bNumeric) {
      return aNumeric ? -1 : 1;
    } else if (a !== b) {
      return a < b ? -1 : 1;
    }
  }
  return 0;
}
