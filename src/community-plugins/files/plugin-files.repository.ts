import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { setImmediate } from 'node:timers/promises';
import { EntityManager, IsNull, Not, Repository } from 'typeorm';
import { retryOnDeadlock } from '../../database/deadlock';
import { countShownChange } from '../catalogue/index/shown-changes';
import { UserPlugin } from '../shared/user-plugin.entity';

/** Rows per statement of the reads that go through every plugin (see inIdPages). */
const READ_PAGE = 2000;
/**
 * What the plugin rows say of their files: which file each row serves, its digest, and the
 * missing mark, for the reconciler, the directory claim and the digest checks. The altered
 * mark moves a plugin between the catalogue's lists: shared/plugins.repository.ts sets it.
 */
@Injectable()
export class PluginFilesRepository {
  constructor(@InjectRepository(UserPlugin) private readonly plugins: Repository<UserPlugin>) {}

  /**
   * Approved plugins' served files, for the digest check of the reconciler and svc-admin.
   * Plain rows read a page of ids at a time (see inIdPages); only whether a file is marked
   * altered is read of its mark.
   */
  async approvedFiles(): Promise<
    Array<Pick<UserPlugin, 'id' | 'name' | 'filePath' | 'sha256'> & { fileAltered: boolean }>
  > {
    const rows = await this.inIdPages<{
      id: number | string;
      name: string;
      file_path: string;
      sha256: string | null;
      file_altered_at: unknown;
    }>('`id`, `name`, `file_path`, `sha256`, `file_altered_at`', "`status` = 'approved'");
    return rows.map((row) => ({
      id: Number(row.id),
      name: row.name,
      filePath: row.file_path,
      sha256: row.sha256,
      fileAltered: row.file_altered_at !== null,
    }));
  }

  /**
   * Every row matching `where`, in id order, READ_PAGE rows per statement with a turn of the
   * event loop between: better-sqlite3 holds the event loop while a statement runs, and one
   * over 100,000 rows held it for 0.3 to 0.5 s (and TypeORM's entities cost as much again).
   */
  private async inIdPages<Row extends { id: number | string }>(
    columns: string,
    where = '1 = 1',
  ): Promise<Row[]> {
    const rows: Row[] = [];
    for (let after = 0; ;) {
      const page = (await this.plugins.query(
        `SELECT ${columns} FROM \`user_plugins\` WHERE ${where} AND \`id\` > ? ORDER BY \`id\` LIMIT ${READ_PAGE}`,
        [after],
      )) as Row[];
      rows.push(...page);
      if (page.length < READ_PAGE) return rows;
      after = Number(page[page.length - 1].id);
      await setImmediate();
    }
  }

  /** Readers see the digest (public view, manifest): a change they are shown (countShownChange). */
  async setDigestIfUnset(id: number, filePath: string, sha256: string): Promise<void> {
    await this.shownWrite(async (manager) =>
      Boolean((await manager.update(UserPlugin, { id, filePath, sha256: IsNull() }, { sha256 })).affected),
    );
  }

  /**
   * What the reconciler compares with the plugin directory: every row's file, and whether it
   * is marked missing. Plain rows, not entities: at 100,000 plugins hydration alone took
   * longer than the rest of a start.
   */
  async files(): Promise<Array<{ id: number; name: string; filePath: string; fileMissing: boolean }>> {
    const rows = await this.inIdPages<{
      id: number | string;
      name: string;
      file_path: string;
      file_missing_at: unknown;
    }>('`id`, `name`, `file_path`, `file_missing_at`');
    return rows.map((row) => ({
      id: Number(row.id),
      name: row.name,
      filePath: row.file_path,
      fileMissing: row.file_missing_at !== null,
    }));
  }

  hasRowForFile(filePath: string): Promise<boolean> {
    return this.plugins.existsBy({ filePath });
  }

  /** Marks (a Date) or clears (null) a missing file; false when the row is gone or already so. */
  async setFileMissing(id: number, at: Date | null): Promise<boolean> {
    return this.shownWrite(async (manager) =>
      Boolean(
        (
          await manager.update(
            UserPlugin,
            { id, fileMissingAt: at === null ? Not(IsNull()) : IsNull() },
            { fileMissingAt: at },
          )
        ).affected,
      ),
    );
  }

  /** A write that readers see (the manifest leaves out a missing file), counted with it when it changed a row. */
  private shownWrite(write: (manager: EntityManager) => Promise<boolean>): Promise<boolean> {
    return retryOnDeadlock(() =>
      this.plugins.manager.transaction(async (manager) => {
        const changed = await write(manager);
        if (changed) await countShownChange((sql, params) => manager.query(sql, params) as Promise<unknown>);
        return changed;
      }),
    );
  }
}
