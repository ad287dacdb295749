import type { INestApplication } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import { PUBLIC_EXTENSION, TOKEN_SCOPE_EXTENSION } from './api-docs';
import { serveSwaggerUi } from './swagger-ui';

export const OPENAPI_UI_PATH = 'api/docs';
export const OPENAPI_JSON_PATH = 'api/docs-json';

/** The OpenAPI 3 document, built from the routes and their decorators. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('svc-api')
    .setDescription(
      'Web API of a security-assessment framework: accounts, configuration, sessions and targets, ' +
        'and the community plugin marketplace. Account endpoints answer HTTP 200 with {status, message}; ' +
        'the others answer {status: "success", data}; errors are {status: "fail", message} with the HTTP status.',
    )
    .setVersion('1')
    // The paths hold /api/v1: the API is at the root of the server that serves this document.
    .addServer('/', 'The server that serves this document')
    // The JWT of a password login, or a personal access token (`svcpat_...`) on the operations
    // its scopes open (`x-svc-token-scope`).
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT or svcpat_ access token' }, 'bearer')
    .addSecurityRequirements('bearer')
    .addTag('accounts', 'Registration, email confirmation, login, logout, password reset by OTP')
    .addTag(
      'configuration',
      'Framework settings and tool paths; reading needs a token, changing needs an admin',
    )
    .addTag('sessions', "The caller's sessions; path shape `/api/v1/sessions/[<session_id>[/<action>]]`")
    .addTag('targets', "The caller's targets (URLs to assess)")
    .addTag('community-plugins', 'The plugin marketplace: upload, catalogue, review by admins')
    .addTag('health', 'Liveness and readiness')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    // An aliased route (one handler, several paths) is keyed `name[index]`; `name_index` stays an identifier.
    operationIdFactory: (controller: string, method: string) =>
      `${controller}_${method.replace(/\[(\d+)\]$/, '_$1')}`,
  });
  for (const [path, method, operation] of operationsOf(document)) {
    // Deny by default: every operation needs the bearer token unless its route is @Public().
    if (PUBLIC_EXTENSION in operation) {
      operation.security = [];
      delete (operation as Record<string, unknown>)[PUBLIC_EXTENSION];
      delete (operation as Record<string, unknown>)[TOKEN_SCOPE_EXTENSION];
    } else {
      declareTokenScope(method, operation);
    }
    // Aliases (one handler, several paths) share their parameters; a path parameter belongs
    // where its path names it, in the order the path names them.
    const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
    const place = (parameter: ParameterObject | ReferenceObject) =>
      'in' in parameter && parameter.in === 'path' ? inPath.indexOf(parameter.name) : inPath.length;
    operation.parameters = operation.parameters
      ?.filter((parameter) => place(parameter) !== -1)
      .sort((left, right) => place(left) - place(right));
    inlineRequestBody(document, operation);
    declareEdgeAnswers(method, operation);
  }
  removeUnusedSchemas(document);
  closeResponseSchemas(document);
  return document;
}

/**
 * The scope a personal access token needs, as JwtAuthGuard's rule gives it where the route
 * names none: `review` on admin routes, `read` on other GETs, `none` (refused) otherwise.
 */
function declareTokenScope(method: string, operation: OperationObject): void {
  const declared = operation as unknown as Record<string, unknown>;
  if (TOKEN_SCOPE_EXTENSION in declared) return;
  const forbidden = (operation.responses['403'] as ResponseObject | undefined)?.description ?? '';
  declared[TOKEN_SCOPE_EXTENSION] = forbidden.includes('Admin privileges required')
    ? 'review'
    : method === 'get' || method === 'head'
      ? 'read'
      : 'none';
}

/** Statuses that come from the HTTP edge and the exception filter, not from a route's own code. */
const EDGE_ANSWERS: Record<number, { messages: string; bodies?: true; database?: true }> = {
  400: { messages: '`Malformed request body`', bodies: true },
  413: {
    messages: '`Request body too large` (bodies above 100 kB; an upload has its own limit)',
    bodies: true,
  },
  415: {
    messages: 'A body of a type the API does not read; the message names the types it reads',
    bodies: true,
  },
  503: { messages: '`Service unavailable` (the database does not answer)', database: true },
  500: { messages: '`Internal server error`, with the `error_id` under which it was logged' },
};

/**
 * Every operation can meet these, so each declares them: bodies are read (and refused) on
 * every method but GET and HEAD; every route but OPTIONS reads the database.
 */
function declareEdgeAnswers(method: string, operation: OperationObject): void {
  const readsBody = method !== 'get' && method !== 'head';
  for (const [code, edge] of Object.entries(EDGE_ANSWERS)) {
    if ((edge.bodies && !readsBody) || (edge.database && method === 'options')) continue;
    const existing = operation.responses[code] as ResponseObject | undefined;
    if (existing) {
      if (!existing.description.includes(edge.messages)) existing.description += `; ${edge.messages}`;
      continue;
    }
    operation.responses[code] = {
      description: edge.messages,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Fail' } } },
    };
  }
}

/** Request DTOs are inlined where they are sent; their components would be unused. */
function removeUnusedSchemas(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== 'object') return;
    for (const [key, member] of Object.entries(value)) {
      if (key === '$ref' && typeof member === 'string') {
        const name = member.replace('#/components/schemas/', '');
        if (!used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
      } else visit(member);
    }
  };
  visit(document.paths);
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}

/**
 * What the service answers has exactly the members its schema lists: an answer schema is
 * closed (`additionalProperties: false`), so a member added to an answer without its DTO is
 * a mismatch the e2e suite reports, and the plugin views' `oneOf` matches one view only.
 * `Fail` stays open: a refusal may carry more for the clients that read it.
 */
function closeResponseSchemas(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  for (const [name, schema] of Object.entries(schemas)) {
    const object = schema as SchemaObject;
    if (name === 'Fail' || object.type !== 'object' || !object.properties) continue;
    object.additionalProperties ??= false;
  }
}

/**
 * A request DTO belongs to one operation: its form is shown where it is sent (Swagger UI
 * renders a multipart form field by field only from an inline schema) rather than as a
 * shared component.
 */
function inlineRequestBody(document: OpenAPIObject, operation: OperationObject): void {
  const body = operation.requestBody as RequestBodyObject | undefined;
  for (const media of Object.values(body?.content ?? {})) {
    const ref = (media.schema as ReferenceObject | undefined)?.$ref;
    const name = ref?.replace('#/components/schemas/', '');
    const schema = name ? (document.components?.schemas?.[name] as SchemaObject | undefined) : undefined;
    if (schema) media.schema = schema;
  }
}

function* operationsOf(document: OpenAPIObject): Generator<[string, string, OperationObject]> {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, value] of Object.entries(item)) {
      if (value && typeof value === 'object' && 'responses' in value) {
        yield [path, method, value as OperationObject];
      }
    }
  }
}

export function setupOpenApi(app: NestFastifyApplication): void {
  SwaggerModule.setup(OPENAPI_UI_PATH, app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    useGlobalPrefix: false,
    raw: ['json'],
    ui: false,
  });
  serveSwaggerUi(app, OPENAPI_UI_PATH, OPENAPI_JSON_PATH);
}
