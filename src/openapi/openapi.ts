import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import { PUBLIC_EXTENSION } from './api-docs';

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
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
    .addSecurityRequirements('bearer')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  // Deny by default: every operation needs the bearer token unless its route is @Public().
  for (const path of Object.values(document.paths)) {
    for (const operation of Object.values(path)) {
      if (operation && typeof operation === 'object' && PUBLIC_EXTENSION in operation) {
        (operation as Record<string, unknown>).security = [];
        delete (operation as Record<string, unknown>)[PUBLIC_EXTENSION];
      }
    }
  }
  return document;
}

export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup(OPENAPI_UI_PATH, app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    useGlobalPrefix: false,
  });
}
