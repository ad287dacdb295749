/**
 * The catalogue's search and tag index (issue 22): three tables of our own, kept with the plugin
 * row in the row's own transaction, so `q=` and `tag=` read an index instead of every row.
 *
 * - `plugin_search`: one row per plugin, its name, description and author lower-cased (by
 *   JavaScript, so the same on every database), compared bytewise.
 * - `plugin_grams`: every distinct run of up to three characters that starts at some position
 *   of one of those three lower-cased fields (the trigrams, and the last two and one characters
 *   of each field), stored as the hex of its UTF-8 bytes: plain ASCII, so both databases order
 *   and compare it bytewise, with no collation and no trailing-space padding in the way. A hex
 *   prefix is a text prefix, so "some gram starts with s" is one index range.
 * - `plugin_tags`: one row per tag, indexed by tag.
 *
 * What `q=` means, on both databases alike: the lower-cased query is a substring of the
 * lower-cased name, description or author. For a query of up to three characters the gram
 * range is the exact answer (an occurrence starts a stored gram); a longer one is narrowed
 * to the plugins that have its rarest trigram and then checked with INSTR on plugin_search.
 * See docs/decisions/catalogue-search-index.md for why this and not FTS5 or FULLTEXT.
 */

/** Runs one statement: an EntityManager's or a QueryRunner's `query`. */
export type RunQuery = (sql: string, params?: unknown[]) => Promise<unknown>;

/** What is indexed of a plugin. */
export interface IndexedPlugin {
  id: number;
  name: string;
  description: string;
  author: string;
  tags: readonly string[];
}

/** Characters of a gram, and the probes a long query makes to find its rarest trigrams. */
const GRAM_LENGTH = 3;
const PROBED_GRAMS = 8;
/** A gram counted up to this many plugins is as common as it gets for choosing. */
const PROBE_CAP = 1000;
/** Rows per INSERT statement (two or three parameters each). */
const ROWS_PER_INSERT = 400;

export const fold = (text: string): string => text.toLowerCase();

const hex = (text: string): string => Buffer.from(text, 'utf8').toString('hex');

/** The hex grams of one plugin's three text fields, without repeats. */
export function pluginGrams(fields: readonly string[]): string[] {
  const grams = new Set<string>();
  for (const field of fields) {
    const characters = Array.from(fold(field));
    for (let index = 0; index < characters.length; index++) {
      grams.add(hex(characters.slice(index, index + GRAM_LENGTH).join('')));
    }
  }
  return [...grams];
}

/** How one `q` is looked up. */
export type SearchPlan =
  /** Up to three characters: the plugins with a gram in [from, to) are exactly the matches. */
  | { kind: 'range'; from: string; to: string }
  /** Longer: the plugins with all these trigrams, then checked for the folded text itself. */
  | { kind: 'grams'; grams: string[]; text: string };

export function searchPlan(q: string): SearchPlan {
  const text = fold(q);
  const characters = Array.from(text);
  if (characters.length <= GRAM_LENGTH) {
    const from = hex(text);
    // Hex digits sort below "g": every gram that starts with `from` lies in [from, from + "g").
    return { kind: 'range', from, to: `${from}g` };
  }
  const grams = new Set<string>();
  for (let index = 0; index + GRAM_LENGTH <= characters.length; index++) {
    grams.add(hex(characters.slice(index, index + GRAM_LENGTH).join('')));
  }
  return { kind: 'grams', grams: [...grams], text };
}

/** At most `count` of the grams, spread over the query (its first and last among them). */
export function probedGrams(grams: readonly string[], count = PROBED_GRAMS): string[] {
  if (grams.length <= count) return [...grams];
  const picked = new Set<string>();
  for (let step = 0; step < count; step++) {
    picked.add(grams[Math.round((step * (grams.length - 1)) / (count - 1))]);
  }
  return [...picked];
}

/**
 * How many plugins have each gram, counted up to PROBE_CAP: one statement, a bounded index
 * range per gram, so choosing never costs more than a few thousand index entries.
 */
export async function gramCounts(run: RunQuery, grams: readonly string[]): Promise<Map<string, number>> {
  const sql = grams
    .map(
      (_, index) =>
        `SELECT ${index} AS \`k\`, COUNT(1) AS \`n\` FROM ` +
        `(SELECT 1 AS \`one\` FROM \`plugin_grams\` WHERE \`gram\` = ? LIMIT ${PROBE_CAP}) AS \`g${index}\``,
    )
    .join(' UNION ALL ');
  const rows = (await run(sql, [...grams])) as Array<{ k: number | string; n: number | string }>;
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(grams[Number(row.k)], Number(row.n));
  return counts;
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
    'INSERT INTO `plugin_search` (`plugin_id`, `name`, `description`, `author`)',
    4,
    plugins.map((plugin) => [plugin.id, fold(plugin.name), fold(plugin.description), fold(plugin.author)]),
  );
  await insertRows(
    run,
    'INSERT INTO `plugin_grams` (`gram`, `plugin_id`)',
    2,
    plugins.flatMap((plugin) =>
      pluginGrams([plugin.name, plugin.description, plugin.author]).map((gram) => [gram, plugin.id]),
    ),
  );
  await insertRows(
    run,
    'INSERT INTO `plugin_tags` (`plugin_id`, `tag`)',
    2,
    plugins.flatMap((plugin) => [...new Set(plugin.tags)].map((tag) => [plugin.id, tag])),
  );
}

/** Removes a plugin's index rows (the foreign keys would too; this does not rely on them). */
export async function unindexPlugin(run: RunQuery, id: number): Promise<void> {
  for (const table of ['plugin_grams', 'plugin_tags', 'plugin_search']) {
    await run(`DELETE FROM \`${table}\` WHERE \`plugin_id\` = ?`, [id]);
  }
}

/** The plugin's index rows, written again from what it holds now. */
export async function reindexPlugin(run: RunQuery, plugin: IndexedPlugin): Promise<void> {
  await unindexPlugin(run, plugin.id);
  await indexPlugins(run, [plugin]);
}

/** Tags as the `tags` column stores them: `,a,b,` (empty for none). */
export const tagsOfColumn = (stored: string | null | undefined): string[] =>
  typeof stored === 'string' ? stored.split(',').filter((tag) => tag !== '') : [];

/**
 * Indexes every plugin row that has no `plugin_search` row yet, a batch at a time, and says
 * how many: the migration's backfill, and at each start-up for rows an older replica wrote.
 * Each batch is its own transaction when `transaction` is given.
 */
export async function indexUnindexed(
  run: RunQuery,
  transaction?: <T>(work: (run: RunQuery) => Promise<T>) => Promise<T>,
  batch = 500,
): Promise<number> {
  let indexed = 0;
  for (;;) {
    const rows = (await run(
      'SELECT p.`id`, p.`name`, p.`description`, p.`author`, p.`tags` FROM `user_plugins` p ' +
        'WHERE NOT EXISTS (SELECT 1 FROM `plugin_search` s WHERE s.`plugin_id` = p.`id`) ' +
        `ORDER BY p.\`id\` LIMIT ${batch}`,
    )) as Array<{
      id: number | string;
      name: string;
      description: string;
      author: string;
      tags: string | null;
    }>;
    if (rows.length === 0) return indexed;
    const plugins = rows.map((row) => ({
      id: Number(row.id),
      name: row.name ?? '',
      description: row.description ?? '',
      author: row.author ?? '',
      tags: tagsOfColumn(row.tags),
    }));
    const write = async (into: RunQuery) => {
      // A plugin indexed meanwhile (by another replica) is skipped, not indexed twice.
      const ids = plugins.map((plugin) => plugin.id);
      const done = (await into(
        `SELECT \`plugin_id\` FROM \`plugin_search\` WHERE \`plugin_id\` IN (${ids.map(() => '?').join(', ')})`,
        ids,
      )) as Array<{ plugin_id: number | string }>;
      const skip = new Set(done.map((row) => Number(row.plugin_id)));
      await indexPlugins(
        into,
        plugins.filter((plugin) => !skip.has(plugin.id)),
      );
    };
    if (transaction) await transaction(write);
    else await write(run);
    indexed += rows.length;
  }
}
