import type { Violation } from './types';

/** Warnings kept with a version: the first ones, in the validator's order. */
export const MAX_KEPT_WARNINGS = 50;
/**
 * A kept message's length in code points: a message quotes the plugin's own names, which may be
 * long, and the kept list must fit a TEXT column (64 KB on MariaDB) even in 4-byte characters.
 */
export const MAX_KEPT_MESSAGE = 200;

/**
 * What a version keeps of an accepted file's warnings (`[]` for none): each finding's four
 * fields, at most MAX_KEPT_WARNINGS of them (then one `too-large` entry says how many more).
 */
export function keptWarnings(warnings: readonly Violation[] | undefined): Violation[] {
  const all = warnings ?? [];
  const kept = all.slice(0, MAX_KEPT_WARNINGS).map(({ rule, message, line, column }) => ({
    rule,
    message: shortened(message),
    line,
    column,
  }));
  if (all.length > MAX_KEPT_WARNINGS) {
    const first = all[MAX_KEPT_WARNINGS];
    kept.push({
      rule: 'too-large',
      message: `${all.length - MAX_KEPT_WARNINGS} more warnings are not listed`,
      line: first.line,
      column: first.column,
    });
  }
  return kept;
}

function shortened(message: string): string {
  const points = Array.from(message);
  return points.length <= MAX_KEPT_MESSAGE ? message : `${points.slice(0, MAX_KEPT_MESSAGE - 1).join('')}…`;
}
