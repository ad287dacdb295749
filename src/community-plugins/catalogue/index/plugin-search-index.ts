/**
 * The catalogue's search and tag index (issue 22): tables of our own, kept with the plugin row
 * in the row's own transaction, so `q=` and `tag=` read an index instead of every row.
 *
 * - `plugin_search`: one row per plugin, its name, description and author lower-cased (by
 *   JavaScript, so the same on every database), compared bytewise, and the list its runs carry.
 * - `plugin_runs`: for every position of those three lower-cased fields, the run of up to
 *   RUN_LENGTH characters that starts there (once per plugin), stored as the hex of its UTF-8
 *   bytes: plain ASCII, so both databases order and compare it bytewise, with no collation and
 *   no trailing-space padding in the way. A hex prefix is a text prefix, so "some run starts
 *   with s" is one index range. Each run also carries what a page of the unfiltered lists needs,
 *   so that such a `q=` is counted and paged from the runs alone, without reading a plugin row
 *   per match (on MariaDB that read cost 2.5 µs a match):
 *   - `shared`: the hex digits it shares with the plugin's previous run in sorted order. Of a
 *     plugin's runs that start with s, exactly the first shares fewer than s's digits with the
 *     one before it, so counting those runs counts plugins, each once, without DISTINCT;
 *   - `list`: the unfiltered catalogue lists the plugin is in (listCode);
 *   - `created_ms`: its `created_at` in ms, the newest-first sort key.
 * - `plugin_tags`: one row per tag, indexed by tag.
 *
 * What `q=` means, on both databases alike: the lower-cased query is a substring of the
 * lower-cased name, description or author. For a query of up to RUN_LENGTH characters the run
 * range is the exact answer (an occurrence starts a stored run); a longer one is narrowed to the
 * plugins that have its rarest window of RUN_LENGTH characters as a whole run and then checked
 * with INSTR on plugin_search. See docs/decisions/catalogue-search-index.md for why this and not
 * FTS5 or FULLTEXT.
 */
import { setImmediate } from 'node:timers/promises';
import type { CatalogueView, Membership } from './catalogue-counts';
import type { RunQuery } from './run-query';

/** What is indexed of a plugin. */
export interface IndexedPlugin {
  id: number;
  name: string;
  description: string;
  author: string;
  tags: readonly string[];
  /** The lists it is in, as listCode gives them. */
  list: number;
  /** Its `created_at` in ms since the epoch. */
  createdMs: number;
}

/** Characters of a run: a query this long or shorter is answered by the runs alone. */
export const RUN_LENGTH = 8;
/** Windows a longer query probes to find its rarest. */
const PROBED_WINDOWS = 8;
/** A run counted up to this many plugins is as common as it gets for choosing. */
const PROBE_CAP = 1000;
/** Rows per INSERT statement (five parameters at most each). */
const ROWS_PER_INSERT = 400;
/** Plugin ids per statement of repairIndex's scan. */
const REPAIR_WINDOW = 2000;

export const fold = (text: string): string => text.toLowerCase();

const hex = (text: string): string => Buffer.from(text, 'utf8').toString('hex');

/** The lists of a plugin as its runs carry them: 0 none, 1 the admins' only (file altered), 2 everyone's too. */
export const listCode = (membership: Membership): number =>
  membership.listed ? 2 : membership.approved ? 1 : 0;

/** listCode of the user_plugins row `p`, in SQL. */
const LIST_OF_ROW =
  "CASE WHEN p.`status` <> 'approved' THEN 0 WHEN p.`file_altered_at` IS NULL THEN 2 ELSE 1 END";

/** The runs (`r`) of the plugins in an unfiltered list. */
export const RUNS_IN_VIEW: Record<CatalogueView, string> = {
  approved: 'r.`list` >= 1',
  listed: 'r.`list` = 2',
};

/** Newest first over the runs (`r`): the catalogue's `created_at DESC, id DESC`. */
export const RUNS_NEWEST_FIRST = 'r.`created_ms` DESC, r.`plugin_id` DESC';

/** A `created_at` as read without the entity (a Date from MySQL, UTC text from SQLite), in ms. */
export function epochMs(value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : Date.parse(`${String(value).replace(' ', 'T')}Z`);
  if (Number.isNaN(ms)) throw new Error(`Unreadable created_at: ${String(value)}`);
  return ms;
}

/** The run (hex) of up to RUN_LENGTH characters that starts at `index`. */
const runAt = (characters: readonly string[], index: number): string =>
  hex(characters.slice(index, index + RUN_LENGTH).join(''));

const sharedDigits = (before: string, run: string): number => {
  let digits = 0;
  while (digits < before.length && before[digits] === run[digits]) digits++;
  return digits;
};

/** A plugin's runs over its three text fields, without repeats, sorted, each with `shared`. */
export function pluginRuns(fields: readonly string[]): Array<{ run: string; shared: number }> {
  const runs = new Set<string>();
  for (const field of fields) {
    const characters = Array.from(fold(field));
    for (let index = 0; index < characters.length; index++) runs.add(runAt(characters, index));
  }
  // Hex is ASCII: this order is the databases' bytewise one.
  const sorted = [...runs].sort();
  return sorted.map((run, index) => ({
    run,
    shared: index === 0 ? 0 : sharedDigits(sorted[index - 1], run),
  }));
}

/** How one `q` is looked up. */
export type SearchPlan =
  /** Up to RUN_LENGTH characters: the plugins with a run in [from, to) are exactly the matches. */
  | { kind: 'prefix'; from: string; to: string; digits: number }
  /** Longer: the plugins with one of these windows as a whole run, then checked for the text itself. */
  | { kind: 'windows'; windows: string[]; text: string };

export function searchPlan(q: string): SearchPlan {
  const text = fold(q);
  const characters = Array.from(text);
  if (characters.length <= RUN_LENGTH) {
    const from = hex(text);
    // Hex digits sort below "g": every run that starts with `from` lies in [from, from + "g").
    return { kind: 'prefix', from, to: `${from}g`, digits: from.length };
  }
  const windows = new Set<string>();
  for (let index = 0; index + RUN_LENGTH <= characters.length; index++) windows.add(runAt(characters, index));
  return { kind: 'windows', windows: [...windows], text };
}

/** At most `count` of the windows, spread over the query (its first and last among them). */
export function probedWindows(windows: readonly string[], count = PROBED_WINDOWS): string[] {
  if (windows.length <= count) return [...windows];
  const picked = new Set<string>();
  for (let step = 0; step < count; step++) {
    picked.add(windows[Math.round((step * (windows.length - 1)) / (count - 1))]);
  }
  return [...picked];
}

/**
 * How many plugins have each run, counted up to PROBE_CAP: one statement, a bounded index
 * range per run, so choosing never costs more than a few thousand index entries.
 */
export async function runCounts(run: RunQuery, runs: readonly string[]): Promise<Map<string, number>> {
  const sql = runs
    .map(
      (_, index) =>
        `SELECT ${index} AS \`k\`, COUNT(1) AS \`n\` FROM ` +
        `(SELECT 1 AS \`one\` FROM \`plugin_runs\` WHERE \`run\` = ? LIMIT ${PROBE_CAP}) AS \`w${index}\``,
    )
    .join(' UNION ALL ');
  const rows = (await run(sql, [...runs])) as Array<{ k: number | string; n: number | string }>;
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(runs[Number(row.k)], Number(row.n));
  return counts;
}

/** The plugins `q` matches as a FROM and a WHERE over the runs (`r`), one row per plugin. */
export interface SearchMatches {
  from: string;
  where: string;
  params: unknown[];
}

/** How to read the matches of `q` (see SearchPlan); null when no plugin can match. */
export async function searchMatches(run: RunQuery, q: string): Promise<SearchMatches | null> {
  const plan = searchPlan(q);
  if (plan.kind === 'prefix') {
    return {
      from: '`plugin_runs` r',
      where: 'r.`run` >= ? AND r.`run` < ? AND r.`shared` < ?',
      params: [plan.from, plan.to, plan.digits],
    };
  }
  const counts = await runCounts(run, probedWindows(plan.windows));
  const [rarest, fewest] = [...counts.entries()].sort((a, b) => a[1] - b[1])[0];
  if (fewest === 0) return null;
  return {
    from: '`plugin_runs` r JOIN `plugin_search` s ON s.`plugin_id` = r.`plugin_id`',
    where:
      'r.`run` = ? AND ' +
      '(INSTR(s.`name`, ?) > 0 OR INSTR(s.`description`, ?) > 0 OR INSTR(s.`author`, ?) > 0)',
    params: [rarest, plan.text, plan.text, plan.text],
  };
}

async function insertRows(run: RunQuery, head: string, width: number, rows: unknown[][]): Promise<void> {
  const tuple = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const chunk = rows.slice(start, start + ROWS_PER_INSERT);
    await run(`${head} VALUES ${chunk.map(() => tuple).join(', ')}`, chunk.flat());
  }
}

/** Writes the index rows of these plugins, which must have none yet. */
export async function indexPlugins(run: RunQuery, plugins: readonly IndexedPlugin[]): Promise<void> {
  if (plugins.length === 0) return;
  await insertRows(
    run,
    'INSERT INTO `plugin_search` (`plugin_id`, `name`, `description`, `author`, `list`)',
    5,
    plugins.map((plugin) => [
      plugin.id,
      fold(plugin.name),
      fold(plugin.description),
      fold(plugin.author),
      plugin.list,
    ]),
  );
  await insertRows(
    run,
    'INSERT INTO `plugin_runs` (`run`, `plugin_id`, `shared`, `list`, `created_ms`)',
    5,
    plugins.flatMap((plugin) =>
      pluginRuns([plugin.name, plugin.description, plugin.author]).map(({ run: text, shared }) => [
        text,
        plugin.id,
        shared,
        plugin.list,
        plugin.createdMs,
      ]),
    ),
  );
  await insertRows(
    run,
    'INSERT INTO `plugin_tags` (`plugin_id`, `tag`)',
    2,
    plugins.flatMap((plugin) => [...new Set(plugin.tags)].map((tag) => [plugin.id, tag])),
  );
}

const INDEX_TABLES = ['plugin_runs', 'plugin_tags', 'plugin_search'];

/** Removes these plugins' index rows (the foreign keys would too; this does not rely on them). */
export async function unindexPlugins(run: RunQuery, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const marks = ids.map(() => '?').join(', ');
  for (const table of INDEX_TABLES) {
    await run(`DELETE FROM \`${table}\` WHERE \`plugin_id\` IN (${marks})`, [...ids]);
  }
}

/** The plugin's index rows, written again from what it holds now. */
export async function reindexPlugin(run: RunQuery, plugin: IndexedPlugin): Promise<void> {
  await unindexPlugins(run, [plugin.id]);
  await indexPlugins(run, [plugin]);
}

/** The plugins' index rows say they are in the lists `list` stands for (listCode); rows that do already are left alone. */
export async function relistPlugins(run: RunQuery, ids: readonly number[], list: number): Promise<void> {
  if (ids.length === 0) return;
  const marks = ids.map(() => '?').join(', ');
  for (const table of ['plugin_runs', 'plugin_search']) {
    await run(`UPDATE \`${table}\` SET \`list\` = ? WHERE \`plugin_id\` IN (${marks}) AND \`list\` <> ?`, [
      list,
      ...ids,
      list,
    ]);
  }
}

/** Tags as the `tags` column stores them: `,a,b,` (empty for none). */
export const tagsOfColumn = (stored: string | null | undefined): string[] =>
  typeof stored === 'string' ? stored.split(',').filter((tag) => tag !== '') : [];

/** A plugin row `p` whose index rows are missing, from older code (no `list`), or in other lists than it. */
const STALE = `(s.\`list\` IS NULL OR s.\`list\` <> ${LIST_OF_ROW})`;

/**
 * Whether some plugin has no index rows, or rows older code wrote (no `list`): two counts, since
 * every plugin_search row names a plugin of its own (primary and foreign key).
 */
export async function someUnindexed(run: RunQuery): Promise<boolean> {
  const [row] = (await run(
    'SELECT (SELECT COUNT(1) FROM `user_plugins`) - (SELECT COUNT(`list`) FROM `plugin_search`) AS `unindexed`',
  )) as Array<{ unindexed: number | string }>;
  return Number(row.unindexed) > 0;
}

/** What repairIndex did. */
export interface IndexRepair {
  /** Plugins (re)indexed: they had no index rows, or rows written by older code. */
  indexed: number;
  /** Plugins whose runs carried other lists than theirs (a writer that bypassed the index moved them). */
  relisted: number;
}

/**
 * Brings the index in line with the plugin rows, REPAIR_WINDOW ids per statement with a turn of
 * the event loop between: the migration's backfill, and at each start and reconciler pass for
 * what older code wrote (a plugin without index rows, or approved, revoked or marked without
 * its runs). Each window's fixes are one transaction when `transaction` is given.
 */
export async function repairIndex(
  run: RunQuery,
  transaction?: <T>(work: (run: RunQuery) => Promise<T>) => Promise<T>,
): Promise<IndexRepair> {
  const repair: IndexRepair = { indexed: 0, relisted: 0 };
  const [{ last }] = (await run('SELECT COALESCE(MAX(`id`), 0) AS `last` FROM `user_plugins`')) as Array<{
    last: number | string;
  }>;
  for (let after = 0; after < Number(last); after += REPAIR_WINDOW) {
    const stale = (await run(
      'SELECT p.`id` FROM `user_plugins` p LEFT JOIN `plugin_search` s ON s.`plugin_id` = p.`id` ' +
        `WHERE p.\`id\` > ? AND p.\`id\` <= ? AND ${STALE}`,
      [after, after + REPAIR_WINDOW],
    )) as Array<{ id: number | string }>;
    if (stale.length > 0) {
      const ids = stale.map((row) => Number(row.id));
      const fix = (into: RunQuery) => repairPlugins(into, ids, repair);
      if (transaction) await transaction(fix);
      else await fix(run);
    }
    await setImmediate();
  }
  return repair;
}

/** Re-reads these plugins under their row locks and fixes those still stale. */
async function repairPlugins(run: RunQuery, ids: number[], repair: IndexRepair): Promise<void> {
  const marks = ids.map(() => '?').join(', ');
  // Every writer that moves a plugin between lists holds its row lock: with it, what is read
  // below is current and stays so until this commits.
  await run(`UPDATE \`user_plugins\` SET \`id\` = \`id\` WHERE \`id\` IN (${marks})`, ids);
  const rows = (await run(
    'SELECT p.`id`, p.`name`, p.`description`, p.`author`, p.`tags`, p.`created_at`, ' +
      `${LIST_OF_ROW} AS \`list\`, s.\`list\` AS \`kept\` FROM \`user_plugins\` p ` +
      `LEFT JOIN \`plugin_search\` s ON s.\`plugin_id\` = p.\`id\` WHERE p.\`id\` IN (${marks}) AND ${STALE}`,
    ids,
  )) as Array<{
    id: number | string;
    name: string | null;
    description: string | null;
    author: string | null;
    tags: string | null;
    created_at: unknown;
    list: number | string;
    kept: number | string | null;
  }>;
  const unindexed = rows.filter((row) => row.kept === null);
  await unindexPlugins(
    run,
    unindexed.map((row) => Number(row.id)),
  );
  await indexPlugins(
    run,
    unindexed.map((row) => ({
      id: Number(row.id),
      name: row.name ?? '',
      description: row.description ?? '',
      author: row.author ?? '',
      tags: tagsOfColumn(row.tags),
      list: Number(row.list),
      createdMs: epochMs(row.created_at),
    })),
  );
  repair.indexed += unindexed.length;
  const moved = rows.filter((row) => row.kept !== null);
  for (const list of new Set(moved.map((row) => Number(row.list)))) {
    await relistPlugins(
      run,
      moved.filter((row) => Number(row.list) === list).map((row) => Number(row.id)),
      list,
    );
  }
  repair.relisted += moved.length;
}
