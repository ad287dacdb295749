import type { SchemaObject } from '@nestjs/swagger';
import { namedSchema } from '../openapi/api-docs';
import { VALUE_MAX } from './configuration-defaults';

/** ConfigurationItemView (configuration-rules.ts). */
export const CONFIGURATION_ITEM = namedSchema('ConfigurationItem', {
  type: 'object',
  required: ['dirty', 'key', 'descrip', 'section', 'value'],
  properties: {
    dirty: { type: 'boolean', description: 'Changed through the API since it was seeded' },
    key: { type: 'string' },
    descrip: { type: 'string', description: 'May be empty' },
    section: { type: 'string' },
    value: { type: 'string' },
  },
});

export const CONFIGURATION_BY_SECTION: SchemaObject = {
  type: 'object',
  description: 'Section name to its items; sections and keys in code-point order',
  additionalProperties: { type: 'array', items: CONFIGURATION_ITEM },
};

export const CONFIGURATION_FILTERS: Record<string, SchemaObject> = {
  key: { type: 'array', items: { type: 'string' }, description: 'Only these keys (repeatable)' },
  section: { type: 'array', items: { type: 'string' }, description: 'Only these sections (repeatable)' },
  dirty: {
    type: 'boolean',
    description: '`true`/`false` (or `1`/`0`): only changed or only unchanged items',
  },
};

export const CONFIGURATION_CHANGES: SchemaObject = {
  type: 'object',
  description:
    'One argument per configuration key, its value the new value (the first one when a key is repeated). ' +
    'Every key must exist; all changes are applied or none.',
  additionalProperties: { type: 'string', maxLength: VALUE_MAX },
  example: { sqlmap_path: '/usr/bin/sqlmap' },
};
