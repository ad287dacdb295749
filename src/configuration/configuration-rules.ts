import { VALUE_MAX } from './configuration-defaults';

/** The 400 of both routes: a filter or change the rules refuse. */
export const INCORRECT_PARAMETERS = 'Incorrect query parameters';

/** What grouping reads of an item (its view, `ConfigurationItemView`, is the DTO's, which imports these rules). */
interface GroupedItem {
  key: string;
  section: string;
  dirty: boolean;
}

/** GET filters: an item passes when it matches every filter given (values of one filter: any of). */
export interface ConfigurationFilter {
  keys: string[];
  sections: string[];
  dirty?: boolean;
}

const byCodePoint = (left: string, right: string): number => (left < right ? -1 : left > right ? 1 : 0);

/**
 * Items grouped by section, sections and keys in code-point order, so the answer is the
 * same on every database whatever its collation.
 */
export function groupBySection<Item extends GroupedItem>(
  items: Item[],
  filter: ConfigurationFilter,
): Record<string, Item[]> {
  const groups = new Map<string, Item[]>();
  const selected = items
    .filter((item) => filter.keys.length === 0 || filter.keys.includes(item.key))
    .filter((item) => filter.sections.length === 0 || filter.sections.includes(item.section))
    .filter((item) => filter.dirty === undefined || item.dirty === filter.dirty)
    .sort((left, right) => byCodePoint(left.section, right.section) || byCodePoint(left.key, right.key));
  for (const item of selected) {
    const group = groups.get(item.section) ?? [];
    group.push(item);
    groups.set(item.section, group);
  }
  // fromEntries defines own properties, so no section name can reach the prototype.
  return Object.fromEntries(groups);
}

/** What a PATCH asks for: key/value pairs in the order given, and the keys whose value is unusable. */
export interface RequestedChanges {
  changes: Array<[key: string, value: string]>;
  /** Keys whose value is not text (an object, null, an empty list). */
  notText: string[];
}

/**
 * Every argument of the body, then every query argument the body does not have; a key given
 * more than once takes its first value (urlencoded repeats arrive as a list).
 */
export function requestedChanges(body: unknown, query: unknown): RequestedChanges {
  const changes: Array<[string, string]> = [];
  const notText: string[] = [];
  const seen = new Set<string>();
  for (const source of [body, query]) {
    if (!source || typeof source !== 'object' || Array.isArray(source)) continue;
    for (const [key, raw] of Object.entries(source as Record<string, unknown>)) {
      if (seen.has(key)) continue;
      seen.add(key);
      const value = firstText(raw);
      if (value === undefined) notText.push(key);
      else changes.push([key, value]);
    }
  }
  return { changes, notText };
}

function firstText(raw: unknown): string | undefined {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * Why a value cannot be stored, or null when it can. Values end up as tool paths and
 * arguments, where a line break or other control character only ever means trouble.
 */
export function valueProblem(value: string): string | null {
  if ([...value].length > VALUE_MAX) return `must be at most ${VALUE_MAX} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) return 'must not contain control characters';
  return null;
}
