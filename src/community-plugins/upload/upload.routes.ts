import { ApiBody, ApiConsumes } from '@nestjs/swagger';
import { NeedsScope } from '../../common/decorators';
import { routeDocs } from '../../openapi/api-docs';
import { UploadVersionArgs } from '../dto/plugin-lifecycle.dto';
import { UploadPluginArgs } from '../dto/plugin.dto';
import { PLUGIN_FILE_PART } from '../shared/plugin-constants';
import { ApiPluginId, NOT_FOUND } from '../shared/plugin-routes';
import { PluginView } from '../views/plugin-audience';
import { OwnerPluginView } from '../views/plugin-views';
import {
  DISK_FULL,
  INVALID_METADATA,
  MALFORMED_BODY,
  ONE_FILE_ONLY,
  ONLY_PY_FILES,
  STORAGE_UNAVAILABLE,
  TOO_MANY_PENDING,
  VALIDATOR_BUSY,
  VERSION_WAITING,
} from './upload-answers';

/** The 400s of a multipart body, the same for a new plugin and a new version. */
const BODY_REFUSALS = [
  ONLY_PY_FILES,
  ONE_FILE_ONLY,
  INVALID_METADATA,
  MALFORMED_BODY,
  `No ${PLUGIN_FILE_PART} provided`,
];

/**
 * The upload's routes: a new plugin and a new version.
 * Each is one decorator holding its access, its documented answers and its arguments; the
 * controller gives it its path and handler.
 */
export const UPLOAD_ROUTES = {
  upload: () =>
    routeDocs(
      PluginView('uploader', {
        summary: 'Upload a plugin; it waits for review as `pending`',
        description:
          "Before the body is read: the uploader's attempts per hour (429 with `Retry-After`) and plugins " +
          'waiting for review (409). Then, in this order: the `.py` extension, the size, the metadata ' +
          '(`errors` names each field), the unique name, then the static validator (`errors` lists each ' +
          'violation with rule, message, line and column; 503 with `Retry-After` when it has no room for the ' +
          'upload now). A refused upload leaves neither a row nor a file.',
        status: 201,
        data: OwnerPluginView,
        fails: {
          400: BODY_REFUSALS,
          409: ['Plugin name already exists', TOO_MANY_PENDING],
          413: ['Plugin file exceeds maximum size of <PLUGIN_UPLOAD_MAX_SIZE> bytes'],
          422: ['Plugin failed validation'],
          429: ['Too many requests'],
          503: [VALIDATOR_BUSY, `${STORAGE_UNAVAILABLE}: <cause>`],
          507: [DISK_FULL],
        },
      }),
      ApiConsumes('multipart/form-data'),
      ApiBody({ type: UploadPluginArgs }),
      NeedsScope('upload'),
    ),
  version: () =>
    routeDocs(
      PluginView('uploader', {
        summary: 'Upload a new version of your plugin; it waits for review',
        description:
          "The plugin's uploader only (404 for anyone else, before the body is read). The upload's checks in the " +
          "upload's order: extension, size, the `version` field (`errors`), its order and the one waiting (409), the " +
          'validator (422). The approved version stays in the catalogue until this one is approved.',
        status: 201,
        data: OwnerPluginView,
        fails: {
          400: BODY_REFUSALS,
          ...NOT_FOUND,
          409: ['Version must be greater than <latest>', VERSION_WAITING],
          413: ['Plugin file exceeds maximum size of <PLUGIN_UPLOAD_MAX_SIZE> bytes'],
          422: ['Plugin failed validation'],
          429: ['Too many requests'],
          503: [VALIDATOR_BUSY, `${STORAGE_UNAVAILABLE}: <cause>`],
          507: [DISK_FULL],
        },
      }),
      ApiPluginId(),
      ApiConsumes('multipart/form-data'),
      ApiBody({ type: UploadVersionArgs }),
      NeedsScope('upload'),
    ),
};
