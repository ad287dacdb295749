import { identityKey, MAX_IDENTITY_KEY_LENGTH } from '../../users/identity-key';
import {
  AUTHOR_LENGTH,
  DESCRIPTION_LENGTH,
  EXECUTION_TIMEOUT,
  NAME_LENGTH,
  PLUGIN_GROUPS,
  DEFAULT_VERSION,
  MAX_TAGS,
  PLUGIN_TYPES,
  PluginGroup,
  PluginType,
  TAG_MAX_LENGTH,
  TAG_PATTERN,
  VERSION_MAX_LENGTH,
  VERSION_PATTERN,
} from './plugin-constants';

export interface PluginMetadata {
  name: string;
  description: string;
  group: PluginGroup;
  type: PluginType;
  author: string;
  executionTimeout: number;
  version: string;
  tags: string[];
}

/** One message per field that failed, keyed by the field's form name. */
export type MetadataErrors = Record<string, string>;

export type MetadataResult = { ok: true; metadata: PluginMetadata } | { ok: false; errors: MetadataErrors };

/** The form fields of an upload, in the order their errors are reported. */
export const METADATA_FIELDS = [
  'name',
  'description',
  'group',
  'type',
  'author',
  'execution_timeout',
  'version',
  'tags',
] as const;

/**
 * C0/C1 controls, and the invisible formatting characters that reorder or hide text
 * (bidirectional overrides, zero-width joiners), which would make a name read as another.
 */
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;
/**
 * Free text (a description, a rejection reason): line breaks and tabs are fine in it, other
 * controls and the bidirectional overrides are not.
 */
export const CONTROL_IN_TEXT = /[^\P{Cc}\t\n\r]|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

const lengthOf = (text: string): number => [...text].length;

/** Reads one multipart text field: undefined when absent; given twice or not text, an error. */
function textFieldReader(
  fields: Record<string, unknown>,
  errors: MetadataErrors,
): (field: string) => string | undefined {
  return (field) => {
    const value = fields[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') {
      errors[field] = Array.isArray(value) ? 'must be given once' : 'must be text';
      return undefined;
    }
    return value;
  };
}

/**
 * Checks the text fields of an upload. Text fields are trimmed before their length is
 * measured and are stored trimmed; a field given twice or as anything but text is refused.
 */
export function validateMetadata(fields: Record<string, unknown>): MetadataResult {
  const errors: MetadataErrors = {};
  const text = textFieldReader(fields, errors);

  const name = boundedText(text('name'), 'name', NAME_LENGTH, CONTROL_OR_FORMAT, errors);
  // A few characters expand many times under NFKC; the key column has room for 255.
  if (name !== undefined && lengthOf(identityKey(name)) > MAX_IDENTITY_KEY_LENGTH)
    errors.name = `must be at most ${MAX_IDENTITY_KEY_LENGTH} characters once normalised`;
  const description = boundedText(
    text('description'),
    'description',
    DESCRIPTION_LENGTH,
    CONTROL_IN_TEXT,
    errors,
  );
  const group = choice(text('group'), 'group', PLUGIN_GROUPS, errors);
  const type = choice(text('type'), 'type', PLUGIN_TYPES, errors);
  const author = boundedText(text('author'), 'author', AUTHOR_LENGTH, CONTROL_OR_FORMAT, errors);
  const executionTimeout = timeout(text('execution_timeout'), errors);
  const version = versionOf(text('version'), errors);
  const tags = tagsOf(fields.tags, errors);

  if (Object.keys(errors).length > 0) return { ok: false, errors: ordered(errors) };
  return {
    ok: true,
    metadata: {
      name: name!,
      description: description!,
      group: group!,
      type: type!,
      author: author!,
      executionTimeout,
      version,
      tags,
    },
  };
}

function boundedText(
  raw: string | undefined,
  field: string,
  bounds: { min: number; max: number },
  forbidden: RegExp,
  errors: MetadataErrors,
): string | undefined {
  if (errors[field]) return undefined;
  const value = raw?.trim();
  if (value === undefined || value === '') {
    errors[field] = 'is required';
    return undefined;
  }
  if (forbidden.test(value)) {
    errors[field] = 'must not contain control characters';
    return undefined;
  }
  const length = lengthOf(value);
  if (length < bounds.min || length > bounds.max) {
    errors[field] = `must be ${bounds.min} to ${bounds.max} characters`;
    return undefined;
  }
  return value;
}

function choice<T extends string>(
  raw: string | undefined,
  field: string,
  allowed: readonly T[],
  errors: MetadataErrors,
): T | undefined {
  if (errors[field]) return undefined;
  if (raw === undefined || raw === '') {
    errors[field] = 'is required';
    return undefined;
  }
  const match = allowed.find((option) => option === raw);
  if (!match) errors[field] = `must be one of ${allowed.join(', ')}`;
  return match;
}

function timeout(raw: string | undefined, errors: MetadataErrors): number {
  if (errors.execution_timeout) return EXECUTION_TIMEOUT.default;
  const value = raw?.trim();
  if (value === undefined || value === '') return EXECUTION_TIMEOUT.default;
  const seconds = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(seconds >= EXECUTION_TIMEOUT.min && seconds <= EXECUTION_TIMEOUT.max)) {
    errors.execution_timeout = `must be an integer from ${EXECUTION_TIMEOUT.min} to ${EXECUTION_TIMEOUT.max}`;
  }
  return seconds;
}

/** Optional: absent or empty is the default version. */
function versionOf(raw: string | undefined, errors: MetadataErrors): string {
  if (errors.version) return DEFAULT_VERSION;
  const value = raw?.trim();
  if (value === undefined || value === '') return DEFAULT_VERSION;
  if (value.length > VERSION_MAX_LENGTH || !VERSION_PATTERN.test(value)) {
    errors.version = `must be a version such as 1.0.0 or 2.1-beta, at most ${VERSION_MAX_LENGTH} characters`;
  }
  return value;
}

/**
 * Optional: one text part of comma-separated tags, or the part repeated (each may hold
 * several, comma-separated). Tags are trimmed and lower-cased; empty ones and repeats are
 * dropped.
 */
function tagsOf(raw: unknown, errors: MetadataErrors): string[] {
  if (raw === undefined) return [];
  const parts = Array.isArray(raw) ? (raw as unknown[]) : [raw];
  if (!parts.every((part): part is string => typeof part === 'string')) {
    errors.tags = 'must be text';
    return [];
  }
  const tags = [
    ...new Set(
      parts
        .flatMap((part) => part.split(','))
        .map((tag) => tag.trim().toLowerCase())
        .filter((tag) => tag !== ''),
    ),
  ];
  if (tags.length > MAX_TAGS) {
    errors.tags = `must be at most ${MAX_TAGS} tags`;
  } else if (!tags.every((tag) => tag.length <= TAG_MAX_LENGTH && TAG_PATTERN.test(tag))) {
    errors.tags = `each tag must be 1 to ${TAG_MAX_LENGTH} letters, digits, ".", "_", "+" or "-", starting with a letter or digit`;
  }
  return tags;
}

function ordered(errors: MetadataErrors): MetadataErrors {
  const result: MetadataErrors = {};
  for (const field of METADATA_FIELDS) if (errors[field]) result[field] = errors[field];
  return result;
}

/** The form fields of a new version. */
export const VERSION_FIELDS = ['version', 'changelog'] as const;
export const CHANGELOG_MAX_LENGTH = 2000;

export type VersionFieldsResult =
  { ok: true; version: string; changelog: string | null } | { ok: false; errors: MetadataErrors };

/** A new version's fields: `version` required (the upload's rule otherwise), `changelog` optional free text. */
export function validateVersionFields(fields: Record<string, unknown>): VersionFieldsResult {
  const errors: MetadataErrors = {};
  const text = textFieldReader(fields, errors);
  const rawVersion = text('version');
  if (rawVersion === undefined && !errors.version) errors.version = 'is required';
  else if (rawVersion !== undefined && rawVersion.trim() === '') errors.version = 'is required';
  const version = versionOf(rawVersion, errors);
  const rawChangelog = text('changelog')?.trim();
  let changelog: string | null = null;
  if (rawChangelog) {
    if (lengthOf(rawChangelog) > CHANGELOG_MAX_LENGTH)
      errors.changelog = `must be at most ${CHANGELOG_MAX_LENGTH} characters`;
    else if (CONTROL_IN_TEXT.test(rawChangelog)) errors.changelog = 'must not contain control characters';
    else changelog = rawChangelog;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, version, changelog };
}
