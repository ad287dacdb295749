/**
 * The size of the unfiltered catalogue, kept instead of counted (issue 22): counting 100,000
 * approved plugins for every page took 5 ms on SQLite and 17 ms on MariaDB, more than the page.
 *
 * `catalogue_counts` has one row per unfiltered list:
 * - `approved`: every approved plugin (what admins list);
 * - `listed`: approved plugins whose file is not altered (what everyone else lists).
 *
 * Each row holds the list's size (`plugins`) and how many times it changed (`changes`). Every
 * write that moves a plugin into or out of a list adds its delta and counts a change in the
 * same transaction as the plugin row (PluginsRepository), so a commit moves both or neither,
 * and a crash cannot leave them apart. Writers lock the plugin row first, then the count rows
 * in one order (`approved`, then `listed`), so two writers never wait on each other in a
 * circle.
 *
 * `changes` tells a reader that a list is still the one it looked at: the catalogue remembers
 * where deep pages start (PluginsRepository's checkpoints) under the `changes` it read, and
 * trusts them only while `changes` is the same.
 *
 * Writers that do not know the table (an older replica during a rolling upgrade, a hand-made
 * UPDATE) leave it wrong: recountCatalogue() puts it right at every start and every
 * reconciliation pass, and says so in the log.
 */
import type { RunQuery } from './run-query';

export const CATALOGUE_COUNTS_TABLE = 'catalogue_counts';

/** The unfiltered lists, in the order their rows are locked. */
export const CATALOGUE_VIEWS = ['approved', 'listed'] as const;
export type CatalogueView = (typeof CATALOGUE_VIEWS)[number];

/** Which unfiltered lists a plugin is in. */
export type Membership = Readonly<Record<CatalogueView, boolean>>;

export const IN_NO_LIST: Membership = { approved: false, listed: false };

export function membershipOf(row: { status: string; fileAlteredAt: unknown }): Membership {
  const approved = row.status === 'approved';
  return { approved, listed: approved && (row.fileAlteredAt === null || row.fileAlteredAt === undefined) };
}

/** A list's kept size and its change count. */
export interface KeptCount {
  plugins: number;
  changes: number;
}

/**
 * Adds a plugin's move between lists to the kept counts, in the caller's transaction (which
 * wrote the plugin row). Nothing is written for a write that moves nothing, so uploads and
 * ratings never touch the count rows.
 */
export async function moveBetweenLists(run: RunQuery, before: Membership, after: Membership): Promise<void> {
  for (const view of CATALOGUE_VIEWS) {
    const delta = Number(after[view]) - Number(before[view]);
    if (delta === 0) continue;
    await run(
      'UPDATE `catalogue_counts` SET `plugins` = `plugins` + ?, `changes` = `changes` + 1 WHERE `name` = ?',
      [delta, view],
    );
  }
}

/** A list's kept size, or null when its row is missing (the caller counts instead). */
export async function keptCount(run: RunQuery, view: CatalogueView): Promise<KeptCount | null> {
  const [row] = (await run('SELECT `plugins`, `changes` FROM `catalogue_counts` WHERE `name` = ?', [
    view,
  ])) as Array<{ plugins: number | string; changes: number | string }>;
  return row ? { plugins: Number(row.plugins), changes: Number(row.changes) } : null;
}

/** Both lists counted in one pass over the catalogue index. */
export async function countLists(run: RunQuery): Promise<Record<CatalogueView, number>> {
  const [row] = (await run(
    'SELECT COUNT(1) AS `approved`, ' +
      'COALESCE(SUM(CASE WHEN `file_altered_at` IS NULL THEN 1 ELSE 0 END), 0) AS `listed` ' +
      "FROM `user_plugins` WHERE `status` = 'approved'",
  )) as Array<{ approved: number | string; listed: number | string }>;
  return { approved: Number(row.approved), listed: Number(row.listed) };
}

/** A kept count that differed from the rows, as found and put right. */
export interface Recount {
  view: CatalogueView;
  kept: number | null;
  counted: number;
}

/**
 * Counts both lists and stores the counts, inside the caller's transaction, and says which kept
 * counts were wrong. It writes the count rows first: that takes their lock (SQLite: the write
 * lock) before counting, so a writer that committed earlier is in the count, and one still
 * open adds its delta to the stored count after this commits. On Galera, a writer on another
 * node that commits meanwhile touches the same rows, so one of the two loses certification and
 * runs again (the caller retries). Every run counts a change, so remembered deep-page starts
 * are dropped even when a writer that bypassed the counts left the size as it was.
 */
export async function recountLists(run: RunQuery): Promise<Recount[]> {
  await run('UPDATE `catalogue_counts` SET `changes` = `changes` + 1');
  const rows = (await run('SELECT `name`, `plugins` FROM `catalogue_counts`')) as Array<{
    name: string;
    plugins: number | string;
  }>;
  const kept = new Map(rows.map((row) => [row.name, Number(row.plugins)]));
  const counted = await countLists(run);
  const wrong: Recount[] = [];
  for (const view of CATALOGUE_VIEWS) {
    const stored = kept.get(view);
    if (stored === counted[view]) continue;
    wrong.push({ view, kept: stored ?? null, counted: counted[view] });
    if (stored === undefined) {
      await run('INSERT INTO `catalogue_counts` (`name`, `plugins`, `changes`) VALUES (?, ?, 1)', [
        view,
        counted[view],
      ]);
    } else {
      await run('UPDATE `catalogue_counts` SET `plugins` = ? WHERE `name` = ?', [counted[view], view]);
    }
  }
  return wrong;
}
