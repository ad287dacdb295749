import { setImmediate } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { DateUtils } from 'typeorm/util/DateUtils';
import { firstVersions } from '../../../migrations/1763692000000-PluginLifecycle';
import { PluginVersion } from './plugin-version.entity';
import type { Violation } from '../../plugin-validator';

export interface VersionApproval {
  user_id: number;
  at: string;
}

/** Every query on plugin_versions, their approvals, and the ratings of plugins. */
/** Versions per statement of files(). */
const FILES_PAGE = 2000;

@Injectable()
export class PluginVersionsRepository {
  constructor(@InjectRepository(PluginVersion) private readonly versions: Repository<PluginVersion>) {}

  async insert(manager: EntityManager, version: Omit<PluginVersion, 'id'>): Promise<PluginVersion> {
    const row = manager.create(PluginVersion, version);
    await manager.insert(PluginVersion, row);
    return row;
  }

  /** Newest first. */
  ofPlugin(pluginId: number, manager: EntityManager = this.versions.manager): Promise<PluginVersion[]> {
    return manager.find(PluginVersion, { where: { pluginId }, order: { id: 'DESC' } });
  }

  find(
    pluginId: number,
    version: string,
    manager: EntityManager = this.versions.manager,
  ): Promise<PluginVersion | null> {
    return manager.findOneBy(PluginVersion, { pluginId, version });
  }

  async setReview(
    manager: EntityManager,
    id: number,
    review: Pick<PluginVersion, 'status' | 'reviewedByUserId' | 'reviewedAt' | 'rejectionReason'>,
  ): Promise<void> {
    await manager.update(PluginVersion, { id }, review);
  }

  /** The validator's warnings on the version of these bytes (a re-check of the rules found them again). */
  async setWarnings(pluginId: number, sha256: string, warnings: Violation[]): Promise<void> {
    await this.versions.manager.update(PluginVersion, { pluginId, sha256 }, { validatorWarnings: warnings });
  }

  async approvalsOf(versionIds: number[]): Promise<Array<{ versionId: number; userId: number; at: Date }>> {
    if (versionIds.length === 0) return [];
    const rows: Array<{ version_id: number | string; user_id: number | string; created_at: Date | string }> =
      await this.versions.manager
        .createQueryBuilder()
        .select(['a.version_id AS version_id', 'a.user_id AS user_id', 'a.created_at AS created_at'])
        .from('plugin_version_approvals', 'a')
        .where('a.version_id IN (:...ids)', { ids: versionIds })
        .orderBy('a.id', 'ASC')
        .getRawMany();
    return rows.map((row) => ({
      versionId: Number(row.version_id),
      userId: Number(row.user_id),
      at: row.created_at instanceof Date ? row.created_at : new Date(`${row.created_at.replace(' ', 'T')}Z`),
    }));
  }

  async hasApproved(manager: EntityManager, versionId: number, userId: number): Promise<boolean> {
    const rows = (await manager.query(
      'SELECT 1 AS found FROM plugin_version_approvals WHERE version_id = ? AND user_id = ?',
      [versionId, userId],
    )) as unknown[];
    return rows.length > 0;
  }

  /** Records one approval; the caller counts the approvals that still count (approvers()). */
  async addApproval(manager: EntityManager, versionId: number, userId: number, at: Date): Promise<void> {
    await manager.query(
      'INSERT INTO plugin_version_approvals (version_id, user_id, created_at) VALUES (?, ?, ?)',
      [versionId, userId, sqlDate(manager, at)],
    );
  }

  /**
   * The users whose approval of the version counts toward the quorum are decided by the
   * caller (the admin role and service at this moment); their rows are read with a shared
   * lock on MySQL, so a demotion or deactivation either commits before this count (and is
   * seen) or waits for the decision it would have changed.
   */
  async approvers(
    manager: EntityManager,
    versionId: number,
  ): Promise<Array<{ id: number; email: string; isAdmin: boolean; inService: boolean }>> {
    const lock = manager.connection.options.type === 'mysql' ? ' LOCK IN SHARE MODE' : '';
    const rows = (await manager.query(
      'SELECT u.id AS id, u.email AS email, u.is_admin AS is_admin, u.deactivated_at AS deactivated_at ' +
        `FROM plugin_version_approvals a JOIN users u ON u.id = a.user_id WHERE a.version_id = ?${lock}`,
      [versionId],
    )) as Array<{ id: number | string; email: string; is_admin: unknown; deactivated_at: unknown }>;
    return rows.map((row) => ({
      id: Number(row.id),
      email: row.email,
      isAdmin: Boolean(Number(row.is_admin)),
      inService: row.deactivated_at === null,
    }));
  }

  /**
   * An admin fetched these bytes of the plugin (its source or a diff): recorded by the request
   * that served them, one row per admin, plugin and digest (a later read only moves `read_at`).
   */
  async recordRead(
    manager: EntityManager,
    userId: number,
    pluginId: number,
    version: string,
    sha256: string,
    at: Date,
  ): Promise<void> {
    const upsert =
      manager.connection.options.type === 'mysql'
        ? 'ON DUPLICATE KEY UPDATE version = VALUES(version), read_at = VALUES(read_at)'
        : 'ON CONFLICT (plugin_id, sha256, user_id) DO UPDATE SET version = excluded.version, read_at = excluded.read_at';
    await manager.query(
      `INSERT INTO plugin_version_reads (user_id, plugin_id, version, sha256, read_at) VALUES (?, ?, ?, ?, ?) ${upsert}`,
      [userId, pluginId, version, sha256, sqlDate(manager, at)],
    );
  }

  async hasRead(manager: EntityManager, userId: number, pluginId: number, sha256: string): Promise<boolean> {
    const rows = (await manager.query(
      'SELECT 1 AS found FROM plugin_version_reads WHERE plugin_id = ? AND sha256 = ? AND user_id = ?',
      [pluginId, sha256, userId],
    )) as unknown[];
    return rows.length > 0;
  }

  /** A rejection ends every read of the bytes it rejected: approving them again takes a read made since. */
  async dropReads(manager: EntityManager, pluginId: number, sha256: string): Promise<void> {
    await manager.query('DELETE FROM plugin_version_reads WHERE plugin_id = ? AND sha256 = ?', [
      pluginId,
      sha256,
    ]);
  }

  /** A rejection ends the round: a later re-approval starts counting again (the audit log keeps the history). */
  async clearApprovals(manager: EntityManager, versionId: number): Promise<void> {
    await manager.query('DELETE FROM plugin_version_approvals WHERE version_id = ?', [versionId]);
  }

  /**
   * Every version's file, for the reconciler. Plain rows, not entities (hydrating 100,000 of
   * them slowed every start), 2,000 per statement with a turn of the event loop between (one
   * SQLite statement over them all held it for 0.25 s).
   */
  async files(): Promise<Array<Pick<PluginVersion, 'id' | 'pluginId' | 'filePath'>>> {
    const files: Array<Pick<PluginVersion, 'id' | 'pluginId' | 'filePath'>> = [];
    for (let after = 0; ;) {
      const rows = (await this.versions.query(
        `SELECT \`id\`, \`plugin_id\`, \`file_path\` FROM \`plugin_versions\` WHERE \`id\` > ? ORDER BY \`id\` LIMIT ${FILES_PAGE}`,
        [after],
      )) as Array<{ id: number | string; plugin_id: number | string; file_path: string }>;
      for (const row of rows) {
        files.push({ id: Number(row.id), pluginId: Number(row.plugin_id), filePath: row.file_path });
      }
      if (rows.length < FILES_PAGE) return files;
      after = Number(rows[rows.length - 1].id);
      await setImmediate();
    }
  }

  hasRowForFile(filePath: string): Promise<boolean> {
    return this.versions.existsBy({ filePath });
  }

  /**
   * Plugins without a version become their own first version (the migration's step, again at
   * start-up). Counts say first whether any plugin needs it (every version names an existing
   * plugin, so as many plugins with a version as plugins means none lacks one): at 100,000
   * plugins the step's INSERT ... SELECT read and locked every row, 0.3 s on MariaDB.
   */
  async createFirstVersions(): Promise<void> {
    const [needed] = (await this.versions.query(
      'SELECT (SELECT COUNT(1) FROM `user_plugins`) - (SELECT COUNT(DISTINCT `plugin_id`) FROM `plugin_versions`) AS `unversioned`, ' +
        "(SELECT COUNT(1) FROM `user_plugins` WHERE `status` = 'pending' AND `pending_version` IS NULL) AS `unmarked`",
    )) as Array<{ unversioned: number | string; unmarked: number | string }>;
    if (Number(needed.unversioned) <= 0 && Number(needed.unmarked) <= 0) return;
    const runner = this.versions.manager.connection.createQueryRunner();
    try {
      await firstVersions(runner);
    } finally {
      await runner.release();
    }
  }

  withoutDigest(): Promise<PluginVersion[]> {
    return this.versions.createQueryBuilder('v').where('v.sha256 IS NULL').getMany();
  }

  async setDigest(id: number, sha256: string): Promise<void> {
    await this.versions.update({ id }, { sha256 });
  }

  // ----- ratings -----

  /** Inserts or replaces the user's rating and answers the plugin's new sum and count. */
  async rate(
    manager: EntityManager,
    pluginId: number,
    userId: number,
    stars: number,
    at: Date,
  ): Promise<{ total: number; count: number }> {
    // The caller holds the plugin's row lock, so no other rating of this plugin runs in between.
    const existing = (await manager.query(
      'SELECT id FROM plugin_ratings WHERE plugin_id = ? AND user_id = ?',
      [pluginId, userId],
    )) as unknown[];
    if (existing.length > 0) {
      await manager.query(
        'UPDATE plugin_ratings SET stars = ?, updated_at = ? WHERE plugin_id = ? AND user_id = ?',
        [stars, sqlDate(manager, at), pluginId, userId],
      );
    } else {
      await manager.query(
        'INSERT INTO plugin_ratings (plugin_id, user_id, stars, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
        [pluginId, userId, stars, sqlDate(manager, at), sqlDate(manager, at)],
      );
    }
    const [row] = (await manager.query(
      'SELECT COALESCE(SUM(stars), 0) AS total, COUNT(1) AS cnt FROM plugin_ratings WHERE plugin_id = ?',
      [pluginId],
    )) as Array<{ total: number | string; cnt: number | string }>;
    return { total: Number(row?.total ?? 0), count: Number(row?.cnt ?? 0) };
  }
}

/** A datetime for a hand-written statement: SQLite keeps UTC text, mysql2 converts a Date itself (timezone Z). */
function sqlDate(manager: EntityManager, at: Date): Date | string {
  return manager.connection.options.type === 'mysql' ? at : DateUtils.mixedDateToUtcDatetimeString(at);
}
