import type { SchemaObject } from '@nestjs/swagger';
import { MAX_ID } from '../common/request-params';
import { namedSchema } from '../openapi/api-docs';
import { SESSION_NAME_MAX } from './session-rules';

const SUMMARY_PROPERTIES: Record<string, SchemaObject> = {
  id: { type: 'integer' },
  name: { type: 'string' },
  active: { type: 'boolean', description: "The caller's active session; at most one is" },
};

/** SessionSummary (sessions.service.ts). */
export const SESSION_SUMMARY = namedSchema('SessionSummary', {
  type: 'object',
  required: ['id', 'name', 'active'],
  properties: SUMMARY_PROPERTIES,
});

/** SessionDetail (sessions.service.ts). */
export const SESSION_DETAIL = namedSchema('SessionDetail', {
  type: 'object',
  required: ['id', 'name', 'active', 'targets'],
  properties: {
    ...SUMMARY_PROPERTIES,
    targets: { type: 'array', items: { type: 'integer' }, description: 'Ids of its targets, ascending' },
  },
});

export const SESSION_LIST: SchemaObject = { type: 'array', items: SESSION_SUMMARY };

export const ACTIVE_FILTER: SchemaObject = {
  type: 'boolean',
  description: '`true`/`false` (or `1`/`0`): only the active session, or only the others',
};

export const NEW_SESSION: SchemaObject = {
  type: 'object',
  required: ['name'],
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: SESSION_NAME_MAX,
      description: "Trimmed; no control characters; unique among the caller's sessions",
    },
  },
};

export const SESSION_TARGET: SchemaObject = {
  type: 'object',
  properties: {
    target_id: {
      type: 'integer',
      minimum: 1,
      description: "One of the caller's targets; needed by `add` and `remove`",
    },
  },
};

export const SESSION_ID: SchemaObject = { type: 'integer', minimum: 1, maximum: MAX_ID };
