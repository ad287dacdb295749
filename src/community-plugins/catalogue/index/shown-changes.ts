/**
 * How many times what readers see of the plugins changed without a move between the catalogue's
 * lists (catalogue-counts.ts counts those) or an audit entry (the chain's head counts those):
 * a rating, the missing-file mark, a digest recorded for an old row. With those two it versions
 * every answer a reader polls (caching/answer-version.repository.ts). One row, counted in the
 * transaction of the write, after the plugin row and the count rows.
 */
import type { RunQuery } from './run-query';

export const SHOWN_CHANGES_TABLE = 'plugin_shown_changes';

/** A change to what readers see, counted in the caller's transaction. */
export async function countShownChange(run: RunQuery): Promise<void> {
  await run('UPDATE `plugin_shown_changes` SET `changes` = `changes` + 1 WHERE `id` = 1');
}
