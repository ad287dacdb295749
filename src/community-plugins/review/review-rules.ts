import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import { REJECTION_REASON_MAX_LENGTH } from '../shared/plugin-constants';
import { CONTROL_IN_TEXT } from '../shared/plugin-metadata';
import type { PluginVersion } from '../shared/plugin-version.entity';
import type { UserPlugin } from '../shared/user-plugin.entity';

/*
 * The review's rules that need no database: its answers, which version a decision or a read
 * acts on, and what a rejection reason may be. plugin-review.service.ts applies them.
 */

export type Decision = 'approve' | 'reject';

export const SELF_REVIEW = 'Admins cannot review their own plugins';
export const ALREADY_APPROVED_BY_YOU = 'You have already approved this version';
export const VERSION_CHANGED = 'The version waiting for review changed; look again';
export const READ_FIRST = 'Read the source of version <version> before approving';
export const OTHER_VERSION_WAITING = 'Version <version> is waiting for review, not <given>';
export const OTHER_VERSION_DECIDED = 'Version <version> is the version to <approve|reject>, not <given>';
export const VERSION_NOT_FOUND = 'Version not found';

/** What the decider says they decide on (approve's and reject's optional `version` and `sha256`). */
export interface ExpectedVersion {
  version?: string;
  sha256?: string;
}

/** The bytes a version (or, for a row older than versions, the plugin itself) is read from. */
export type Readable = Pick<PluginVersion, 'version' | 'sha256' | 'filePath'> &
  Partial<Pick<PluginVersion, 'status' | 'reviewedAt'>>;

/** `versions` newest first; undefined when there is nothing to approve. */
export function versionToApprove(plugin: UserPlugin, versions: PluginVersion[]): PluginVersion | undefined {
  if (plugin.pendingVersion !== null) {
    return versions.find((version) => version.version === plugin.pendingVersion);
  }
  return plugin.status === 'rejected' ? servedVersion(plugin, versions) : undefined;
}

export const FILE_MISSING = 'Plugin file is missing';
export const MODIFIED_ON_DISK = 'Plugin file was modified on disk';
export const fileMissing = (status: HttpStatus) => new ApiError(status, FILE_MISSING);
export const modifiedOnDisk = () => new ApiError(HttpStatus.CONFLICT, MODIFIED_ON_DISK);

/** The version the plugin row names (the one it serves or shows), else its newest. */
export function servedVersion(plugin: UserPlugin, versions: PluginVersion[]): PluginVersion | undefined {
  return versions.find((version) => version.version === plugin.version) ?? versions[0];
}

/**
 * A decider who named a version (or its digest) decides on that one or on nothing: 409 names
 * the version the decision would act on.
 */
export function refuseOtherVersion(
  target: PluginVersion,
  expected: ExpectedVersion,
  decision: Decision,
): void {
  let given: string | null = null;
  if (expected.version !== undefined && expected.version !== target.version) given = expected.version;
  else if (expected.sha256 !== undefined && expected.sha256 !== target.sha256)
    given = `sha256 ${expected.sha256}`;
  if (given === null) return;
  const message =
    target.status === 'pending'
      ? OTHER_VERSION_WAITING.replace('<version>', target.version)
      : OTHER_VERSION_DECIDED.replace('<version>', target.version).replace('<approve|reject>', decision);
  throw new ApiError(HttpStatus.CONFLICT, message.replace('<given>', given));
}

export function validReason(raw: string | undefined): string {
  const reason = raw?.trim();
  if (!reason) throw new ApiError(HttpStatus.BAD_REQUEST, 'Missing rejection reason');
  if ([...reason].length > REJECTION_REASON_MAX_LENGTH) {
    throw new ApiError(
      HttpStatus.BAD_REQUEST,
      `Rejection reason must be at most ${REJECTION_REASON_MAX_LENGTH} characters`,
    );
  }
  if (CONTROL_IN_TEXT.test(reason)) {
    throw new ApiError(HttpStatus.BAD_REQUEST, 'Rejection reason must not contain control characters');
  }
  return reason;
}
