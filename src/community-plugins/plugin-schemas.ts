import type { SchemaObject } from '@nestjs/swagger';
import { namedSchema } from '../openapi/api-docs';
import {
  AUTHOR_LENGTH,
  DESCRIPTION_LENGTH,
  EXECUTION_TIMEOUT,
  NAME_LENGTH,
  PLUGIN_FILE_PART,
  PLUGIN_GROUPS,
  PLUGIN_STATUSES,
  PLUGIN_TYPES,
  REJECTION_REASON_MAX_LENGTH,
} from './plugin-constants';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_SEARCH_LENGTH } from './list-query';

const dateTime: SchemaObject = { type: 'string', format: 'date-time' };
const nullable = (schema: SchemaObject): SchemaObject => ({ ...schema, nullable: true });

/** The three views of views/plugin-views.ts, each the one before plus its own fields. */
const PUBLIC_PROPERTIES: Record<string, SchemaObject> = {
  id: { type: 'integer' },
  name: { type: 'string' },
  description: { type: 'string' },
  group: { type: 'string', enum: [...PLUGIN_GROUPS] },
  type: { type: 'string', enum: [...PLUGIN_TYPES] },
  author: { type: 'string' },
  status: { type: 'string', enum: [...PLUGIN_STATUSES] },
  sha256: nullable({
    type: 'string',
    description: 'Hex SHA-256 of the file; null on rows older than hashes',
  }),
  created_at: dateTime,
  updated_at: dateTime,
};
const OWNER_PROPERTIES: Record<string, SchemaObject> = {
  ...PUBLIC_PROPERTIES,
  rejection_reason: nullable({ type: 'string' }),
  user_id: { type: 'integer', description: 'The uploader' },
};
const ADMIN_PROPERTIES: Record<string, SchemaObject> = {
  ...OWNER_PROPERTIES,
  reviewed_by_user_id: nullable({ type: 'integer' }),
  reviewed_at: nullable(dateTime),
  execution_timeout: { type: 'integer', description: 'Seconds the plugin may run' },
};
const view = (description: string, properties: Record<string, SchemaObject>): SchemaObject => ({
  type: 'object',
  description,
  required: Object.keys(properties),
  properties,
});

export const PUBLIC_PLUGIN = namedSchema(
  'PublicPlugin',
  view('What any signed-in user sees', PUBLIC_PROPERTIES),
);
export const OWNER_PLUGIN = namedSchema('OwnerPlugin', view('What the uploader sees', OWNER_PROPERTIES));
export const ADMIN_PLUGIN = namedSchema('AdminPlugin', view('What admins see', ADMIN_PROPERTIES));

/** CataloguePage (plugin-catalogue.service.ts). */
export const CATALOGUE_PAGE: SchemaObject = {
  type: 'object',
  required: ['total', 'limit', 'offset', 'plugins'],
  properties: {
    total: { type: 'integer', description: 'Plugins that match, over all pages' },
    limit: { type: 'integer', description: 'The limit that applied' },
    offset: { type: 'integer' },
    plugins: {
      type: 'array',
      description: 'Newest first; admin view for admins, public view for everyone else',
      items: { oneOf: [PUBLIC_PLUGIN, ADMIN_PLUGIN] },
    },
  },
};

export const CATALOGUE_FILTERS: Record<string, SchemaObject> = {
  status: {
    type: 'string',
    enum: [...PLUGIN_STATUSES],
    default: 'approved',
    description: '`pending` and `rejected` are for admins only',
  },
  group: { type: 'string', enum: [...PLUGIN_GROUPS] },
  type: { type: 'string', enum: [...PLUGIN_TYPES] },
  q: {
    type: 'string',
    maxLength: MAX_SEARCH_LENGTH,
    description: 'Part of the name or description, any case',
  },
  limit: {
    type: 'integer',
    minimum: 1,
    default: DEFAULT_LIMIT,
    description: `Above ${MAX_LIMIT} counts as ${MAX_LIMIT}`,
  },
  offset: { type: 'integer', minimum: 0, default: 0 },
};

/** CurrentUserView (community-plugins.controller.ts). */
export const CURRENT_USER: SchemaObject = {
  type: 'object',
  required: ['id', 'name', 'email', 'is_admin'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    email: { type: 'string' },
    is_admin: { type: 'boolean' },
  },
};

/** PluginSource (plugin-review.service.ts). */
export const PLUGIN_SOURCE: SchemaObject = {
  type: 'object',
  required: ['id', 'name', 'sha256', 'source_code'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    sha256: { type: 'string', description: 'Of the file as read now' },
    source_code: { type: 'string' },
  },
};

/** ReviewHistory (plugin-review.service.ts). */
export const REVIEW_HISTORY: SchemaObject = {
  type: 'object',
  required: ['plugin_id', 'events'],
  properties: {
    plugin_id: { type: 'integer' },
    events: {
      type: 'array',
      description: 'The upload, then the latest review if there was one; built from the plugin row',
      items: {
        type: 'object',
        required: ['event', 'at', 'user_id'],
        properties: {
          event: { type: 'string', enum: ['uploaded', 'approved', 'rejected'] },
          at: nullable(dateTime),
          user_id: nullable({ type: 'integer', description: 'The uploader, or the reviewer' }),
          reason: nullable({ type: 'string', description: 'Only on `rejected`' }),
        },
      },
    },
  },
};

/** The multipart form of an upload; the text parts may come before or after the file. */
export const UPLOAD_FORM: SchemaObject = {
  type: 'object',
  required: [PLUGIN_FILE_PART, 'name', 'description', 'group', 'type', 'author'],
  properties: {
    [PLUGIN_FILE_PART]: {
      type: 'string',
      format: 'binary',
      description:
        'The Python source: one file, its name ending in `.py`, at most PLUGIN_UPLOAD_MAX_SIZE bytes',
    },
    name: {
      type: 'string',
      minLength: NAME_LENGTH.min,
      maxLength: NAME_LENGTH.max,
      description: 'Unique among plugins, any case',
    },
    description: { type: 'string', minLength: DESCRIPTION_LENGTH.min, maxLength: DESCRIPTION_LENGTH.max },
    group: { type: 'string', enum: [...PLUGIN_GROUPS] },
    type: { type: 'string', enum: [...PLUGIN_TYPES] },
    author: { type: 'string', minLength: AUTHOR_LENGTH.min, maxLength: AUTHOR_LENGTH.max },
    execution_timeout: {
      type: 'integer',
      minimum: EXECUTION_TIMEOUT.min,
      maximum: EXECUTION_TIMEOUT.max,
      default: EXECUTION_TIMEOUT.default,
      description: 'Seconds',
    },
  },
};

export const REJECTION: SchemaObject = {
  type: 'object',
  required: ['reason'],
  properties: {
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: REJECTION_REASON_MAX_LENGTH,
      description: 'Shown to the uploader; trimmed',
    },
  },
};

export const PLUGIN_ID: SchemaObject = { type: 'integer', minimum: 1 };
