import type { INestApplication } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  RequestBodyObject,
  SchemaObject,
} from '@nestjs/swagger';
import { PUBLIC_EXTENSION } from './api-docs';
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
        'the others answer {status: "success", data}; errors are {status: "fail", message} with the HTTP status. ' +
        'Every operation may also answer 400 `Malformed request body`, 413 `Request body too large` (bodies ' +
        'above 100 kB, uploads aside), 503 `Service unavailable` while the database is unreachable and 500 ' +
        'with an `error_id` on an unexpected error.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
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
  for (const [path, operation] of operationsOf(document)) {
    // Deny by default: every operation needs the bearer token unless its route is @Public().
    if (PUBLIC_EXTENSION in operation) {
      operation.security = [];
      delete (operation as Record<string, unknown>)[PUBLIC_EXTENSION];
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
  }
  return document;
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

function* operationsOf(document: OpenAPIObject): Generator<[string, OperationObject]> {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const value of Object.values(item)) {
      if (value && typeof value === 'object' && 'responses' in value) yield [path, value as OperationObject];
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
