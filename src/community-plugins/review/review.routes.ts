import { AdminRoute } from '../../common/decorators';
import { routeDocs } from '../../openapi/api-docs';
import { VersionDiff, VersionList } from '../dto/plugin-lifecycle.dto';
import { PluginSource, RejectArgs, ReviewHistory, ReviewVersionArgs, SourceQuery } from '../dto/plugin.dto';
import { PLUGIN_NOT_FOUND, REJECTION_REASON_MAX_LENGTH } from '../shared/plugin-constants';
import { ApiPluginId, NOT_FOUND } from '../shared/plugin-routes';
import { MALFORMED_BODY } from '../../http/multipart';
import { VALIDATOR_BUSY } from '../upload/upload-answers';
import { PluginView } from '../views/plugin-audience';
import { AdminPluginView } from '../views/plugin-views';
import {
  ALREADY_APPROVED_BY_YOU,
  FILE_MISSING,
  MODIFIED_ON_DISK,
  OTHER_VERSION_DECIDED,
  OTHER_VERSION_WAITING,
  READ_FIRST,
  SELF_REVIEW,
  VERSION_CHANGED,
  VERSION_NOT_FOUND,
} from './review-rules';
import { DIFF_BUSY } from './plugin-versions.service';

/**
 * The review's routes: source, approve, reject, delete, versions, diff, history.
 * Each is one decorator holding its access, its documented answers and its arguments; the
 * controller gives it its path and handler.
 */
export const REVIEW_ROUTES = {
  source: () =>
    routeDocs(
      AdminRoute({
        summary:
          'The source of the version approve would act on, or of `?version=`, read from its file (admins)',
        description:
          'By default the version waiting for review; for a rejected or revoked plugin its own version; else the ' +
          'approved version served. `version` and `sha256` name what is shown. Serving it records that this admin ' +
          'read those bytes (a body-less approve needs that). 409 when the file no longer matches the hash ' +
          'recorded at upload; 410 when it is missing (the plugin is then marked `file_missing` in the admin view).',
        data: PluginSource,
        fails: {
          400: ['Invalid request arguments'],
          404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND],
          409: [MODIFIED_ON_DISK],
          410: [FILE_MISSING],
        },
        query: SourceQuery,
      }),
      ApiPluginId(),
    ),
  approve: () =>
    routeDocs(
      PluginView('reviewer', {
        summary: 'Approve the version waiting for review, or reinstate a rejected or revoked plugin (admins)',
        description:
          'The body is optional (the spec sends none). Checks in this order: the plugin, a version to approve ' +
          '(a revoked plugin: the revoked version), the `version` and `sha256` given (if any) are that version, its ' +
          "file has its recorded digest, the approver's address does not reach the mailbox of the version's or the " +
          "plugin's uploader (`Alice+x@` is `alice@`; unless PLUGIN_SELF_REVIEW=allowed), the approver fetched those " +
          'bytes (`source/` or the diff) since the version was last rejected, and has not approved it yet. With ' +
          'PLUGIN_APPROVALS_REQUIRED above 1 the version stays pending until that many admins approved it; an ' +
          'approval counts while its admin is an admin in service.',
        data: AdminPluginView,
        fails: {
          400: ['Invalid request arguments'],
          ...NOT_FOUND,
          403: [SELF_REVIEW],
          409: [
            'Plugin is already approved',
            OTHER_VERSION_WAITING,
            OTHER_VERSION_DECIDED,
            FILE_MISSING,
            MODIFIED_ON_DISK,
            READ_FIRST,
            ALREADY_APPROVED_BY_YOU,
            VERSION_CHANGED,
          ],
        },
        args: ReviewVersionArgs,
      }),
      ApiPluginId(),
    ),
  reject: () =>
    routeDocs(
      PluginView('reviewer', {
        summary:
          'Reject the version waiting for review, or revoke an approved plugin, with a reason (admins)',
        description:
          'The uploader is mailed the reason. An admin may not reject a version uploaded from their own mailbox ' +
          '(as for approve). `version` and `sha256` (optional) must name the version rejected (else 409). Every ' +
          'read of the rejected bytes ends: approving them again takes a new read.',
        data: AdminPluginView,
        fails: {
          403: [SELF_REVIEW],
          400: [
            'Missing rejection reason',
            `Rejection reason must be at most ${REJECTION_REASON_MAX_LENGTH} characters`,
            'Rejection reason must not contain control characters',
            MALFORMED_BODY,
            'Invalid request arguments',
          ],
          ...NOT_FOUND,
          409: ['Plugin is already rejected', OTHER_VERSION_WAITING, OTHER_VERSION_DECIDED, VERSION_CHANGED],
        },
        args: RejectArgs,
      }),
      ApiPluginId(),
    ),
  remove: () =>
    routeDocs(
      AdminRoute({
        summary: 'Delete a plugin and its file (admins)',
        data: null,
        fails: NOT_FOUND,
      }),
      ApiPluginId(),
    ),
  versions: () =>
    routeDocs(
      PluginView('detail', {
        summary: "A plugin's versions, newest first",
        description:
          'Every version for its uploader and admins (admins also see reviews and approvals); approved ones for others.',
        data: VersionList,
        fails: NOT_FOUND,
      }),
      ApiPluginId(),
    ),
  diff: () =>
    routeDocs(
      PluginView('reviewer', {
        summary:
          "A version's source as a unified diff against the latest approved version before it (admins)",
        description:
          'With the validator findings that are new in it. Both files are read through their digest check. Serving ' +
          'it records that this admin read the version (as `source/` does). Computed off the event loop, once per ' +
          'pair of digests; 503 with `Retry-After` when the diff threads have no room for it.',
        data: VersionDiff,
        fails: {
          404: [PLUGIN_NOT_FOUND, VERSION_NOT_FOUND],
          409: [MODIFIED_ON_DISK],
          410: [FILE_MISSING],
          503: [VALIDATOR_BUSY, DIFF_BUSY],
        },
      }),
      ApiPluginId(),
    ),
  history: () =>
    routeDocs(
      AdminRoute({
        summary: 'Upload and review timeline of a plugin (admins)',
        data: ReviewHistory,
        fails: NOT_FOUND,
      }),
      ApiPluginId(),
    ),
};
