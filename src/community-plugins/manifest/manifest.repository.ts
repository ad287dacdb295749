import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { UserPlugin } from '../shared/user-plugin.entity';

/** What the manifest lists: approved, with a digest, and a file that is there and unaltered. */
const MANIFEST_LISTED =
  "p.status = 'approved' AND p.sha256 IS NOT NULL AND p.file_missing_at IS NULL AND p.file_altered_at IS NULL";

export interface ManifestEntryRow {
  id: number;
  name: string;
  version: string;
  sha256: string;
}

/** A file the manifest lists, as the files route serves it. */
export interface ListedFile {
  id: number;
  name: string;
  version: string;
  /** Relative to COMMUNITY_PLUGIN_DIR; never in an answer. */
  filePath: string;
}

type ManifestSnapshotRow = { serial: number | string | null; id: number | string | null } & Omit<
  ManifestEntryRow,
  'id'
>;
/** The manifest's one read of `user_plugins`. */
@Injectable()
export class ManifestRepository {
  constructor(@InjectRepository(UserPlugin) private readonly plugins: Repository<UserPlugin>) {}

  /**
   * What the manifest lists (approved, with a digest, and a file that is there and unaltered)
   * and the audit chain's head count as of the same instant: one statement reads one snapshot
   * on SQLite and InnoDB at any isolation level, and every decision that changes the list
   * appends to the chain in its own transaction, so the entries are exactly the state after
   * `serial` audit entries. Two statements, even in one transaction, would depend on the
   * isolation level (READ COMMITTED takes a fresh snapshot per statement).
   */
  /**
   * The plugin whose served file has this digest, if the manifest lists it now (through the
   * digest's index); a digest that is pending, rejected, revoked or unknown finds nothing.
   */
  async listedFile(sha256: string): Promise<ListedFile | null> {
    const [row] = (await this.plugins.query(
      `SELECT p.id, p.name, p.version, p.file_path FROM user_plugins p WHERE p.sha256 = ? AND ${MANIFEST_LISTED}`,
      [sha256],
    )) as Array<{ id: number | string; name: string; version: string; file_path: string }>;
    return row ? { id: Number(row.id), name: row.name, version: row.version, filePath: row.file_path } : null;
  }

  async manifestSnapshot(): Promise<{ serial: number; entries: ManifestEntryRow[] }> {
    // The head as a subquery keeps InnoDB reading user_plugins in primary-key order (joining it
    // sorted 100,000 rows in a temporary table: 780 ms against 340 ms). Only an empty list needs
    // the join, which answers the head with no plugin row; it is a snapshot of its own, whole.
    const listed = (await this.plugins.query(
      `SELECT (SELECT entries FROM audit_chain WHERE id = 1) AS serial, p.id, p.name, p.version, p.sha256
         FROM user_plugins p WHERE ${MANIFEST_LISTED} ORDER BY p.id`,
    )) as ManifestSnapshotRow[];
    const rows =
      listed.length > 0
        ? listed
        : ((await this.plugins.query(
            `SELECT c.entries AS serial, p.id, p.name, p.version, p.sha256
               FROM audit_chain c LEFT JOIN user_plugins p ON ${MANIFEST_LISTED} WHERE c.id = 1 ORDER BY p.id`,
          )) as ManifestSnapshotRow[]);
    if (rows.length === 0 || rows[0].serial === null) {
      throw new Error('The audit chain head (audit_chain, id 1) is missing');
    }
    return {
      serial: Number(rows[0].serial),
      entries: rows
        .filter((row) => row.id !== null)
        .map((row) => ({ id: Number(row.id), name: row.name, version: row.version, sha256: row.sha256 })),
    };
  }
}
