import { applyDecorators } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtension,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';

/** Marks an operation as needing no token; openapi.ts turns it into `security: []`. */
export const PUBLIC_EXTENSION = 'x-svc-public';
export const ApiPublic = () => ApiExtension(PUBLIC_EXTENSION, true);

export const FAIL_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['status', 'message'],
  properties: {
    status: { type: 'string', enum: ['fail'] },
    message: { type: 'string' },
    errors: { description: 'Several findings, e.g. per field or per validator rule' },
    error_id: { type: 'string', description: 'Only on 500: the id under which the error was logged' },
  },
};

const ACCOUNT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['status', 'message'],
  properties: {
    status: { type: 'string', enum: ['success', 'fail'] },
    message: { oneOf: [{ type: 'string' }, { type: 'object' }] },
  },
};

export function dataEnvelope(data: SchemaObject): SchemaObject {
  return {
    type: 'object',
    required: ['status', 'data'],
    properties: { status: { type: 'string', enum: ['success'] }, data },
  };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing, invalid, expired or revoked token (`Unauthorized`)',
  403: 'Forbidden (`Admin privileges required`)',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Payload too large',
  422: 'Unprocessable entity',
  429: 'Too many requests',
  503: 'Service unavailable',
};

/** The fail envelopes an operation can answer with, each with its HTTP status. */
export function ApiFailResponses(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: STATUS_TEXT[status], schema: FAIL_SCHEMA }),
    ),
  );
}

/**
 * A spec account endpoint: public, parameters as JSON, urlencoded or multipart fields (or the
 * query string), HTTP 200 for success and failure alike; the spec's messages listed.
 */
export function ApiAccountEndpoint(options: {
  summary: string;
  params?: Record<string, string>;
  messages: string[];
  rateLimited?: boolean;
}) {
  const decorators = [
    ApiOperation({
      summary: options.summary,
      description: `Messages: ${options.messages.map((message) => `\`${message}\``).join(', ')}.`,
    }),
    ApiOkResponse({ description: 'Success or failure, told by `status`', schema: ACCOUNT_SCHEMA }),
  ];
  if (options.params) {
    const properties = Object.fromEntries(
      Object.entries(options.params).map(([name, description]) => [name, { type: 'string', description }]),
    );
    decorators.push(
      ApiConsumes('application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'),
      ApiBody({ schema: { type: 'object', properties } }),
    );
  }
  if (options.rateLimited) {
    decorators.push(ApiTooManyRequestsResponse({ description: '`Too many requests`', schema: FAIL_SCHEMA }));
  }
  return applyDecorators(...decorators);
}
