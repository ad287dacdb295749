import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import { MALFORMED_BODY } from '../../http/multipart';
import type { Violation } from '../../plugin-validator';
import type { PluginStorageError } from '../files/plugin-storage';
import { PLUGIN_FILE_PART } from '../shared/plugin-constants';

/*
 * What an upload answers when it refuses, from the parser (the interceptors) or the checks
 * after it (the service): both sides and the routes' documentation read them here.
 */

/** The parsed upload as the multipart interceptor leaves it on the request. */
export interface UploadedPluginFile {
  originalname: string;
  buffer: Buffer;
}

export { MALFORMED_BODY };
export const ONLY_PY_FILES = 'Only .py files are accepted';
export const ONE_FILE_ONLY = `Only one file, in part ${PLUGIN_FILE_PART}, is accepted`;
export const INVALID_METADATA = 'Invalid plugin metadata';

/**
 * 400 `Invalid plugin metadata`: `errors` at the top as documented (`{field: why}`), and under
 * `data.errors` the same findings as lines of text (`name: must be 3 to 128 characters`), the
 * form of the validator's refusals, which the original web client's Upload tab renders.
 */
export const invalidMetadata = (status: HttpStatus, errors: Record<string, string>): ApiError =>
  new ApiError(
    status,
    INVALID_METADATA,
    errors,
    {},
    {
      errors: Object.entries(errors).map(([field, why]) => `${field}: ${why}`),
    },
  );
export const fileTooLarge = (limit: number) => `Plugin file exceeds maximum size of ${limit} bytes`;

/**
 * 422 `Plugin failed validation` (a new plugin or a new version): `errors` at the top stays the
 * structured findings; under `data`, the original web client's Upload tab renders each entry of
 * `errors` as text, so there they are strings (`line 3, column 8: <message> (<rule>)`), and the
 * structured ones are `findings`.
 */
export const failedValidation = (violations: Violation[]): ApiError =>
  new ApiError(
    HttpStatus.UNPROCESSABLE_ENTITY,
    'Plugin failed validation',
    violations,
    {},
    {
      errors: violations.map(findingText),
      findings: violations,
    },
  );

export const findingText = (finding: Violation): string =>
  `line ${finding.line}, column ${finding.column}: ${finding.message} (${finding.rule})`;

export const VERSION_WAITING = 'A version is already waiting for review';
export const versionNotGreater = (version: string) =>
  new ApiError(HttpStatus.CONFLICT, `Version must be greater than ${version}`);

export const nameExists = () => new ApiError(HttpStatus.CONFLICT, 'Plugin name already exists');

export const TOO_MANY_PENDING = 'Too many pending plugins';
export const VALIDATOR_BUSY = 'Validator is busy';
/** A guess: one validation takes well under a second, and the queue is short. */
const VALIDATOR_RETRY_AFTER_SECONDS = '5';

export const validatorBusy = () =>
  new ApiError(HttpStatus.SERVICE_UNAVAILABLE, VALIDATOR_BUSY, undefined, {
    'Retry-After': VALIDATOR_RETRY_AFTER_SECONDS,
  });

export const DISK_FULL = 'Not enough storage space to save the plugin';
export const STORAGE_UNAVAILABLE = 'Plugin storage is unavailable';

/** 507 for a full disk; 503 naming the cause (never the path) for a directory that cannot be written. */
export function storageFailed(error: PluginStorageError): ApiError {
  return error.kind === 'full'
    ? new ApiError(HttpStatus.INSUFFICIENT_STORAGE, DISK_FULL)
    : new ApiError(HttpStatus.SERVICE_UNAVAILABLE, `${STORAGE_UNAVAILABLE}: ${error.reason}`);
}
