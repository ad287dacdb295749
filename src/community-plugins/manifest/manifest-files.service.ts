import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { AuditLog } from '../../audit/audit-log.service';
import { ApiError } from '../../common/api-error';
import { canonicalJson } from '../../common/canonical-json';
import { Transactions } from '../../database/transactions';
import { byteRange } from '../../http/byte-ranges';
import { presentedTags } from '../../http/entity-tags';
import { PluginStorage, sha256Hex } from '../files/plugin-storage';
import { ManifestRepository } from './manifest.repository';
import type { ListedFile } from './manifest.repository';

export const FILE_NOT_FOUND = 'File not found';
export const FILE_UNAVAILABLE = 'Plugin file unavailable';
export const RANGE_NOT_SATISFIABLE = 'Range not satisfiable';

/** The bytes under a digest never change: any cache may keep them for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** What a request for a file says of itself. */
export interface FileRequest {
  method: string;
  ifNoneMatch?: string;
  range?: string;
  ifRange?: string;
}

const notFound = () => new ApiError(HttpStatus.NOT_FOUND, FILE_NOT_FOUND);

/** `<name>-<version>.py`, an ASCII fallback beside the exact name (RFC 6266). */
function disposition(file: ListedFile): string {
  const name = `${file.name}-${file.version}.py`;
  const ascii = name.replace(/[^A-Za-z0-9._-]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * The files the manifest lists, by digest, for the framework's installs: only while listed
 * (the same 404 for every other digest, so the answer tells nothing of pending, rejected or
 * revoked ones), and only bytes that hash to the digest asked for.
 */
@Injectable()
export class ManifestFilesService {
  private readonly logger = new Logger('PluginFiles');

  constructor(
    private readonly listed: ManifestRepository,
    private readonly storage: PluginStorage,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
  ) {}

  /**
   * The whole file (200), one range of it (206), 304 for the copy named by If-None-Match, 416
   * for a range past its end. The file is read whole (uploads are bounded) and hashed before a
   * byte is sent: a file that does not hash to its digest answers 503, logged and audited.
   */
  async serve(sha256: string, request: FileRequest): Promise<Response> {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw notFound();
    const file = await this.listed.listedFile(sha256);
    if (!file) throw notFound();
    const etag = `"${sha256}"`;
    const headers: Record<string, string> = {
      ETag: etag,
      'Cache-Control': IMMUTABLE,
      'Accept-Ranges': 'bytes',
    };
    const presented = presentedTags(request.ifNoneMatch);
    if (presented.includes(etag) || presented.includes('*')) {
      return new Response(null, { status: HttpStatus.NOT_MODIFIED, headers });
    }
    const content = await this.verified(file, sha256);
    Object.assign(headers, { 'Content-Type': 'text/x-python', 'Content-Disposition': disposition(file) });
    // Ranges are defined for GET only, and for the representation If-Range names (RFC 9110 13.1.5).
    const ranged = request.method === 'GET' && (request.ifRange === undefined || request.ifRange === etag);
    const range = ranged ? byteRange(request.range, content.length) : null;
    if (range === 'unsatisfiable') {
      throw new ApiError(HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE, RANGE_NOT_SATISFIABLE, undefined, {
        'Content-Range': `bytes */${content.length}`,
      });
    }
    if (range === null) {
      return new Response(content, {
        status: HttpStatus.OK,
        headers: { ...headers, 'Content-Length': String(content.length) },
      });
    }
    const part = content.subarray(range.first, range.last + 1);
    return new Response(part, {
      status: HttpStatus.PARTIAL_CONTENT,
      headers: {
        ...headers,
        'Content-Range': `bytes ${range.first}-${range.last}/${content.length}`,
        'Content-Length': String(part.length),
      },
    });
  }

  private async verified(file: ListedFile, sha256: string): Promise<Buffer> {
    const content = await this.storage.read(file.filePath);
    const found = content === null ? null : sha256Hex(content);
    if (content !== null && found === sha256) return content;
    this.logger.error(
      `Plugin ${file.id} (${file.name}): not served, its file ${found === null ? 'is missing' : `has sha256 ${found}`}; the manifest lists ${sha256}`,
    );
    await this.recordMismatch(file, sha256, found);
    throw new ApiError(HttpStatus.SERVICE_UNAVAILABLE, FILE_UNAVAILABLE);
  }

  /** Once per content found (every poll of every install asks again): the chain's lock orders the check and the append. */
  private async recordMismatch(file: ListedFile, sha256: string, found: string | null): Promise<void> {
    const subject = `plugin:${file.id}`;
    await this.transactions.run(async (manager) => {
      await this.audit.lockChain(manager);
      const last = await this.audit.latestAbout(subject, ['file_mismatch'], manager);
      const details = { sha256, found: found ?? 'missing' };
      if (last?.details === canonicalJson(details)) return;
      await this.audit.append(manager, { actor: 'system', action: 'file_mismatch', subject, details });
    });
  }
}
