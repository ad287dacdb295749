import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { CATALOGUE_VIEWS, SHOWN_CHANGES } from '../catalogue/index/catalogue-counts';
import { UserPlugin } from '../shared/user-plugin.entity';

/** The counters a version is made of, in the order it lists them. */
const PARTS = ['serial', ...CATALOGUE_VIEWS, SHOWN_CHANGES];

/**
 * A version of everything a reader is shown of the plugins, read from counters that every
 * write already keeps rather than from the rows: the audit chain's head count (every upload,
 * review and delete appends), the lists' change counts (every move between lists, the altered
 * mark included) and the `shown` changes (ratings, the missing mark). A write that changes an
 * answer raises one of them in its own transaction, so an unchanged version is an unchanged
 * answer. One statement: one snapshot of all four.
 */
@Injectable()
export class AnswerVersionRepository {
  constructor(@InjectRepository(UserPlugin) private readonly plugins: Repository<UserPlugin>) {}

  async current(): Promise<string> {
    const rows = (await this.plugins.query(
      "SELECT 'serial' AS `name`, `entries` AS `changes` FROM `audit_chain` WHERE `id` = 1 " +
        'UNION ALL SELECT `name`, `changes` FROM `catalogue_counts`',
    )) as Array<{ name: string; changes: number | string }>;
    const counted = new Map(rows.map((row) => [row.name, Number(row.changes)]));
    return PARTS.map((part) => counted.get(part) ?? 0).join('.');
  }
}
