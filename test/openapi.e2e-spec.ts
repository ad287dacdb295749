import { createTestApp, TestApp } from './helpers/test-app';

interface Operation {
  security?: unknown[];
  responses: Record<string, unknown>;
  requestBody?: { content: Record<string, unknown> };
}
type OpenApi = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};

/**
 * Every route the app serves, as `METHOD /path/{param}`, read from the Express router itself.
 * Catch-alls that only answer 405 for unsupported methods (`@All`) are not endpoints of their own.
 */
function servedRoutes(t: TestApp): string[] {
  const express = t.app.getHttpAdapter().getInstance() as {
    router: { stack: Array<{ route?: { path: string; methods: Record<string, boolean> } }> };
  };
  return express.router.stack.flatMap(({ route }) => {
    if (!route || !route.path.startsWith('/api/v1') || route.path.includes('*')) return [];
    const methods = Object.keys(route.methods).filter((method) => method !== '_all');
    if (methods.length > 8) return [];
    const path = route.path.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1');
    return methods.map((method) => `${method.toUpperCase()} ${path}`);
  });
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: OpenApi;

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.http().get('/api/docs-json').expect(200)).body as OpenApi;
  });
  afterAll(() => t.close());

  it('is OpenAPI 3 with the bearer scheme', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes.bearer).toEqual({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
  });

  it('documents every route of the app', () => {
    const routes = servedRoutes(t);
    expect(routes.length).toBeGreaterThanOrEqual(10);
    const documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/(.)\/$/, '$1')}`),
    );
    const missing = routes.filter((route) => !documented.includes(route));
    expect(missing).toEqual([]);
  });

  it('marks public routes as needing no token and the rest as needing the bearer token', () => {
    expect(doc.paths['/api/v1/login']?.post.security).toEqual([]);
    expect(doc.paths['/api/v1/health']?.get.security).toEqual([]);
    expect(doc.paths['/api/v1/logout']?.get.security).toBeUndefined();
    expect(JSON.stringify(doc)).not.toContain('x-svc-public');
  });

  it('documents the account parameters in every body encoding and the 429', () => {
    const register = doc.paths['/api/v1/register'].post;
    expect(Object.keys(register.requestBody!.content).sort()).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
    ]);
    expect(register.responses['429']).toBeDefined();
  });

  it('serves the Swagger UI', async () => {
    const response = await t.http().get('/api/docs/').expect(200);
    expect(response.text).toContain('swagger-ui');
  });
});
