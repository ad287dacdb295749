import type { SchemaObject } from '@nestjs/swagger';
import { MAX_ID } from '../common/request-params';
import { namedSchema } from '../openapi/api-docs';
import { TARGET_URL_MAX } from './target-url';

/** TargetView (target.entity.ts). */
export const TARGET = namedSchema('Target', {
  type: 'object',
  required: [
    'id',
    'target_url',
    'url_scheme',
    'host_name',
    'port_number',
    'host_path',
    'scope',
    'created_at',
  ],
  properties: {
    id: { type: 'integer' },
    target_url: { type: 'string', description: 'In normal form, without fragment' },
    url_scheme: { type: 'string', enum: ['http', 'https'] },
    host_name: { type: 'string', description: 'Lower case; IPv6 without brackets; IDN in punycode' },
    port_number: { type: 'integer' },
    host_path: { type: 'string', description: 'Path and query' },
    scope: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
  },
});

/** TargetPage (targets.service.ts). */
export const TARGET_PAGE: SchemaObject = {
  type: 'object',
  required: ['total', 'limit', 'offset', 'targets'],
  properties: {
    total: { type: 'integer', description: 'Targets that match, over all pages' },
    limit: { type: 'integer' },
    offset: { type: 'integer' },
    targets: { type: 'array', items: TARGET },
  },
};

export const TARGET_ID: SchemaObject = { type: 'integer', minimum: 1, maximum: MAX_ID };

export const NEW_TARGET: SchemaObject = {
  type: 'object',
  required: ['target_url'],
  properties: {
    target_url: {
      type: 'string',
      maxLength: TARGET_URL_MAX,
      description: 'An absolute http(s) URL with a host and without credentials',
    },
    scope: { type: 'boolean', default: true, description: '`true`/`false` (or `1`/`0`)' },
  },
};
