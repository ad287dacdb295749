import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { DatabaseKind } from '../../database/copy';

/*
 * A backup directory: database/ (the copy), plugins/ (every file a row names), secrets/,
 * manifest.json (what it holds, with the digest of every file) and, written last, once the
 * directory has its final name, BACKUP-COMPLETE (the manifest's digest). Restore accepts a
 * directory only with that marker and every digest matching.
 */
export const MANIFEST = 'manifest.json';
export const COMPLETE_MARKER = 'BACKUP-COMPLETE';
export const BACKUP_FORMAT = 'svc-api backup 1';
export const DIRECTORY_MODE = 0o700;
export const FILE_MODE = 0o600;

export interface PluginFileEntry {
  /** The name the rows give it, relative to COMMUNITY_PLUGIN_DIR. */
  name: string;
  /** The rows that name it, `table:id`. */
  rows: string[];
}

export interface SecretEntry {
  setting: 'JWT_SECRET' | 'PLUGIN_MANIFEST_KEY';
  /** Where the service read it: a file under data/, or the environment. */
  from: string;
  /** In the backup. */
  file: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  created_at: string;
  database: { type: DatabaseKind; source: string; file: string; migrations: string[]; installation: string };
  plugin_files: PluginFileEntry[];
  /** Named by rows but not in the plugin directory when the backup was made (the rows say so too, or will). */
  missing_plugin_files: PluginFileEntry[];
  secrets: SecretEntry[];
  /** Every other file of the directory, by path relative to it. */
  files: Record<string, { sha256: string; bytes: number }>;
}

/** A backup directory restore refuses: one line saying why. */
export class BackupRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupRefused';
  }
}

export async function sha256OfFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Every regular file under `root`, as paths relative to it with `/` between segments. */
export async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

/** Written and fsynced before anything depends on it. */
export async function writeDurably(path: string, content: string | Buffer): Promise<void> {
  const handle = await open(path, 'wx', FILE_MODE);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A directory's entries are durable once the directory itself is synced. */
export async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Marks a backup complete: its manifest's digest, in the last file written. */
export async function markComplete(directory: string): Promise<void> {
  const { sha256 } = await sha256OfFile(join(directory, MANIFEST));
  await writeDurably(join(directory, COMPLETE_MARKER), `${sha256}\n`);
  await syncDirectory(directory);
}

const readOrNull = async (path: string): Promise<string | null> => {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

/**
 * The backup's manifest, once the directory proves complete and unchanged: the marker, the
 * manifest's digest, every file listed with its digest and size, and no file beside them.
 */
export async function verifiedManifest(directory: string): Promise<BackupManifest> {
  let present: string[];
  try {
    present = await filesUnder(directory);
  } catch (error) {
    throw new BackupRefused(
      `${directory} is not a backup directory (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  const marker = await readOrNull(join(directory, COMPLETE_MARKER));
  if (marker === null) {
    throw new BackupRefused(
      `${directory} is not a complete backup: it has no ${COMPLETE_MARKER} (a backup that was stopped leaves such a directory); take another backup`,
    );
  }
  const manifestText = await readOrNull(join(directory, MANIFEST));
  const changed = (what: string) =>
    new BackupRefused(`${directory} was changed or damaged after it was made: ${what}; restore refuses it`);
  if (manifestText === null) throw changed(`${MANIFEST} is missing`);
  if ((await sha256OfFile(join(directory, MANIFEST))).sha256 !== marker.trim()) {
    throw changed(`${MANIFEST} does not match the digest in ${COMPLETE_MARKER}`);
  }
  const manifest = JSON.parse(manifestText) as BackupManifest;
  if (manifest.format !== BACKUP_FORMAT) {
    throw new BackupRefused(
      `${directory} is a backup of another format (${String(manifest.format)}, not ${BACKUP_FORMAT})`,
    );
  }
  const listed = new Set(Object.keys(manifest.files));
  for (const file of present) {
    if (file !== MANIFEST && file !== COMPLETE_MARKER && !listed.has(file)) {
      throw changed(`${file} is not in the manifest`);
    }
  }
  for (const [file, expected] of Object.entries(manifest.files)) {
    if (!present.includes(file)) throw changed(`${file} is missing`);
    const actual = await sha256OfFile(join(directory, file));
    if (actual.sha256 !== expected.sha256 || actual.bytes !== expected.bytes) {
      throw changed(
        `${file} has sha256 ${actual.sha256} (${actual.bytes} bytes), the manifest says ${expected.sha256} (${expected.bytes} bytes)`,
      );
    }
  }
  return manifest;
}
