import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiParam, ApiResponse } from '@nestjs/swagger';
import { AnonymousReads } from '../../common/decorators';
import { ApiFailMessages, routeDocs, withGuards } from '../../openapi/api-docs';
import { Conditional, ETAG_HEADERS } from '../caching/conditional-answers';
import { ManifestKey, PluginManifest } from '../dto/plugin-lifecycle.dto';
import { PluginView } from '../views/plugin-audience';
import { FILE_NOT_FOUND, FILE_UNAVAILABLE, RANGE_NOT_SATISFIABLE } from './manifest-files.service';

const ANONYMOUS = 'Without a token too where `PLUGIN_ANONYMOUS_READS=on` (docs/settings.md).';

/** The headers of a file's answer. */
const FILE_HEADERS = {
  ETag: { description: 'The digest, quoted', schema: { type: 'string' } },
  'Cache-Control': { description: '`public, max-age=31536000, immutable`', schema: { type: 'string' } },
  'Content-Disposition': {
    description: '`attachment` named `<name>-<version>.py`',
    schema: { type: 'string' },
  },
  'Accept-Ranges': { description: '`bytes`', schema: { type: 'string' } },
};

/**
 * The manifest's routes: the signed manifest, its key, and the files it lists by digest.
 * Each is one decorator holding its access, its documented answers and its arguments; the
 * controller gives it its path and handler.
 */
export const MANIFEST_ROUTES = {
  manifest: () =>
    routeDocs(
      PluginView('catalogue', {
        summary: 'The signed manifest: the approved catalogue as the framework loads it',
        description:
          'One entry per approved plugin whose file is present and has its approved digest; never a file path ' +
          '(a file is fetched by its digest from `files/<sha256>/`). `signature` signs every other member; the key is at ' +
          '`manifest/key/`. A loader refuses a manifest past `expires_at` or with a `serial` lower than the last it ' +
          'loaded (docs/plugin-manifest.md). A weak ETag: `If-None-Match` answers 304 while the copy it names is of ' +
          `the current state and has more than half of its lifetime left. ${ANONYMOUS}`,
        data: PluginManifest,
        headers: ETAG_HEADERS,
      }),
      AnonymousReads(),
      Conditional('manifest'),
    ),
  key: () =>
    routeDocs(
      PluginView('catalogue', {
        summary: 'The public key that verifies the manifest',
        description: ANONYMOUS,
        data: ManifestKey,
        headers: ETAG_HEADERS,
      }),
      AnonymousReads(),
      Conditional('key'),
    ),
  file: () =>
    applyDecorators(
      AnonymousReads(),
      ApiOperation({
        summary: 'A file the manifest lists, by its sha256',
        description:
          'The bytes of the approved version the current manifest lists under this digest, checked against it as ' +
          'they are read. Every other digest (pending, rejected, revoked, unknown) is the same 404. One byte range ' +
          '(`Range: bytes=...`, with `If-Range`) answers 206; several ranges answer the whole file. ' +
          `HEAD answers the headers alone. ${ANONYMOUS}`,
      }),
      ApiParam({
        name: 'sha256',
        schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
        description: 'Lower-case hex',
      }),
      ApiHeader({ name: 'If-None-Match', required: false, description: 'The quoted digest of a copy held' }),
      ApiHeader({
        name: 'Range',
        required: false,
        description: 'One range, `bytes=first-last`, `first-` or `-suffix`',
      }),
      ApiHeader({
        name: 'If-Range',
        required: false,
        description: 'The quoted digest: the range only for these bytes',
      }),
      ApiResponse({
        status: 200,
        description: 'The file',
        headers: FILE_HEADERS,
        content: { 'text/x-python': { schema: { type: 'string', format: 'binary' } } },
      }),
      ApiResponse({
        status: 206,
        description: 'One range of the file',
        headers: {
          ...FILE_HEADERS,
          'Content-Range': { description: '`bytes first-last/length`', schema: { type: 'string' } },
        },
        content: { 'text/x-python': { schema: { type: 'string', format: 'binary' } } },
      }),
      ApiResponse({
        status: 304,
        description: 'The copy named by `If-None-Match` is this file',
        headers: FILE_HEADERS,
      }),
      ApiFailMessages(
        withGuards('user', {
          404: [FILE_NOT_FOUND],
          416: [RANGE_NOT_SATISFIABLE],
          503: [FILE_UNAVAILABLE],
        }),
      ),
    ),
};
