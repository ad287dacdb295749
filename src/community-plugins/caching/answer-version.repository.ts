import { Injectable } from '@nestjs/common';
import { PlainReads } from '../../database/plain-reads';
import { CATALOGUE_VIEWS } from '../catalogue/index/catalogue-counts';

/** The counters a version is made of, in the order it lists them. */
const PARTS = ['serial', ...CATALOGUE_VIEWS, 'shown'];

/**
 * A version of everything a reader is shown of the plugins, read from counters that every
 * write already keeps rather than from the rows: the audit chain's head count (every upload,
 * review and delete appends), the lists' change counts (every move between lists, the altered
 * mark included) and the shown changes (catalogue/index/shown-changes.ts: ratings, the missing
 * mark). A write that changes an
 * answer raises one of them in its own transaction, so an unchanged version is an unchanged
 * answer. One statement: one snapshot of all four; a plain read, prepared once, since every
 * poll makes it (docs/decisions/plain-reads.md).
 */
@Injectable()
export class AnswerVersionRepository {
  constructor(private readonly plain: PlainReads) {}

  async current(): Promise<string> {
    const rows = await this.plain.rows<{ name: string; changes: number | string }>(
      "SELECT 'serial' AS `name`, `entries` AS `changes` FROM `audit_chain` WHERE `id` = 1 " +
        'UNION ALL SELECT `name`, `changes` FROM `catalogue_counts` ' +
        "UNION ALL SELECT 'shown', `changes` FROM `plugin_shown_changes` WHERE `id` = 1",
      [],
    );
    const counted = new Map(rows.map((row) => [row.name, Number(row.changes)]));
    return PARTS.map((part) => counted.get(part) ?? 0).join('.');
  }
}
