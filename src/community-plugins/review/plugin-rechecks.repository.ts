import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DateUtils } from 'typeorm/util/DateUtils';
import { setImmediate } from 'node:timers/promises';
import { isDuplicateKeyError } from '../../database/integrity-error';
import type { Violation } from '../../plugin-validator';

/** The verdict of one rules version on one approved file (issue 18's re-check). */
export interface Recheck {
  pluginId: number;
  rulesVersion: number;
  /** The digest of the file judged. */
  sha256: string;
  /** Empty when the file passes. */
  findings: Violation[];
}

/** An approved plugin whose served file has no verdict of the given rules version. */
export interface RecheckCandidate {
  id: number;
  name: string;
  filePath: string;
  sha256: string;
}

/** Plugin ids looked through per statement by unchecked(). */
const ID_RANGE = 5000;

/** Every query on `plugin_rechecks` (one row per plugin: its latest verdict). */
@Injectable()
export class PluginRechecksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Approved plugins, in id order after `afterId`, whose served file (digest known, not missing,
   * not altered) has no verdict of `rulesVersion` yet. Looked for a range of ids at a time, with
   * a turn of the event loop between ranges: when every plugin has its verdict the search reads
   * them all (0.3 s at 100,000 plugins), and one SQLite statement holds the event loop throughout.
   */
  async unchecked(rulesVersion: number, afterId: number, limit: number): Promise<RecheckCandidate[]> {
    const [{ last }] = (await this.dataSource.query(
      'SELECT MAX(`id`) AS `last` FROM `user_plugins`',
    )) as Array<{
      last: number | string | null;
    }>;
    const rows: Array<{ id: number | string; name: string; file_path: string; sha256: string }> = [];
    for (let from = afterId; rows.length < limit && from < Number(last ?? 0); from += ID_RANGE) {
      if (from > afterId) await setImmediate();
      rows.push(
        ...((await this.dataSource.query(
          'SELECT p.`id` AS id, p.`name` AS name, p.`file_path` AS file_path, p.`sha256` AS sha256 ' +
            'FROM `user_plugins` p LEFT JOIN `plugin_rechecks` r ' +
            'ON r.`plugin_id` = p.`id` AND r.`rules_version` = ? AND r.`sha256` = p.`sha256` ' +
            "WHERE p.`status` = 'approved' AND p.`sha256` IS NOT NULL AND p.`file_missing_at` IS NULL " +
            'AND p.`file_altered_at` IS NULL AND r.`plugin_id` IS NULL AND p.`id` > ? AND p.`id` <= ? ' +
            'ORDER BY p.`id` LIMIT ?',
          [rulesVersion, from, from + ID_RANGE, limit - rows.length],
        )) as typeof rows),
      );
    }
    return rows.map((row) => ({
      id: Number(row.id),
      name: row.name,
      filePath: row.file_path,
      sha256: row.sha256,
    }));
  }

  /**
   * Replaces the plugin's older verdict with this one. Another replica storing the same verdict
   * at the same time makes the insert a duplicate, which is the outcome wanted: one row. A
   * plugin deleted meanwhile inserts nothing (the insert selects its row).
   */
  async store(recheck: Recheck, at: Date): Promise<void> {
    await this.dataSource.query(
      'DELETE FROM `plugin_rechecks` WHERE `plugin_id` = ? AND NOT (`rules_version` = ? AND `sha256` = ?)',
      [recheck.pluginId, recheck.rulesVersion, recheck.sha256],
    );
    try {
      await this.dataSource.query(
        'INSERT INTO `plugin_rechecks` (`plugin_id`, `rules_version`, `sha256`, `findings`, `checked_at`) ' +
          'SELECT `id`, ?, ?, ?, ? FROM `user_plugins` WHERE `id` = ?',
        [
          recheck.rulesVersion,
          recheck.sha256,
          JSON.stringify(recheck.findings),
          this.dataSource.options.type === 'mysql' ? at : DateUtils.mixedDateToUtcDatetimeString(at),
          recheck.pluginId,
        ],
      );
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  /** The verdicts on these plugins, by plugin id. */
  async ofPlugins(pluginIds: number[]): Promise<Map<number, Recheck>> {
    const found = new Map<number, Recheck>();
    if (pluginIds.length === 0) return found;
    const rows = (await this.dataSource.query(
      `SELECT \`plugin_id\`, \`rules_version\`, \`sha256\`, \`findings\` FROM \`plugin_rechecks\` ` +
        `WHERE \`plugin_id\` IN (${pluginIds.map(() => '?').join(', ')})`,
      pluginIds,
    )) as Array<{
      plugin_id: number | string;
      rules_version: number | string;
      sha256: string;
      findings: string;
    }>;
    for (const row of rows) {
      found.set(Number(row.plugin_id), {
        pluginId: Number(row.plugin_id),
        rulesVersion: Number(row.rules_version),
        sha256: row.sha256,
        findings: JSON.parse(row.findings) as Violation[],
      });
    }
    return found;
  }
}
