import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { SnapshotQuery } from '../../database/copy';

/** A row's claim on a plugin file, as the snapshot holds it. */
export interface FileReference {
  row: string;
  file: string;
  sha256: string | null;
  /** The row says its file was missing when it was last looked for. */
  markedMissing: boolean;
}

export interface SnapshotFacts {
  references: FileReference[];
  migrations: string[];
  installation: string;
}

/** What a backup reads of the rows: on the copy's own snapshot, and (one question) on the live database. */
@Injectable()
export class BackupRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Every file a plugin row or version names, the migrations applied and the installation id. */
  static async factsOf(query: SnapshotQuery): Promise<SnapshotFacts> {
    const rows = await query(
      "SELECT 'user_plugins' AS tbl, id, file_path, sha256, file_missing_at FROM user_plugins " +
        "UNION ALL SELECT 'plugin_versions' AS tbl, id, file_path, sha256, NULL AS file_missing_at FROM plugin_versions",
    );
    const migrations = await query('SELECT name FROM migrations ORDER BY id');
    const [installation] = await query('SELECT id FROM installation');
    return {
      references: rows.map((row) => ({
        row: `${String(row.tbl)}:${String(row.id)}`,
        file: String(row.file_path),
        sha256: row.sha256 === null ? null : String(row.sha256),
        markedMissing: row.file_missing_at !== null,
      })),
      migrations: migrations.map((row) => String(row.name)),
      installation: String(installation.id),
    };
  }

  /** True while a row of the live database still names the file (false: it was deleted after the snapshot). */
  async stillNamed(file: string): Promise<boolean> {
    const rows = (await this.dataSource.query(
      'SELECT 1 AS named FROM user_plugins WHERE file_path = ? UNION ALL SELECT 1 AS named FROM plugin_versions WHERE file_path = ?',
      [file, file],
    )) as unknown[];
    return rows.length > 0;
  }
}
