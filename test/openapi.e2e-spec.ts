import {
  EXECUTION_TIMEOUT,
  PLUGIN_GROUPS,
  PLUGIN_TYPES,
} from '../src/community-plugins/shared/plugin-constants';
import { UserPlugin } from '../src/community-plugins/shared/user-plugin.entity';
import { toAdminView, toOwnerView, toPublicView } from '../src/community-plugins/views/plugin-views';
import { Target, toTargetView } from '../src/targets/target.entity';
import type { ApiHttpAdapter } from '../src/http/http-adapter';
import { signUpAs } from './helpers/marketplace';
import { ResponseChecker } from './helpers/openapi-responses';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  nullable?: boolean;
  additionalProperties?: boolean | Schema;
}
interface Response {
  description: string;
  content?: Record<string, { schema: Schema }>;
  headers?: Record<string, { required?: boolean; schema: Schema }>;
}
interface Operation {
  operationId: string;
  summary?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  responses: Record<string, Response>;
  requestBody?: { content: Record<string, { schema: Schema }> };
}
type OpenApi = {
  openapi: string;
  servers?: Array<{ url: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Schema> };
};

/** Every status code the app's own code answers with. */
const STATUSES_IN_USE = [
  '200',
  '201',
  '202',
  '204',
  '206',
  '304',
  '400',
  '401',
  '403',
  '404',
  '409',
  '410',
  '413',
  '415',
  '416',
  '422',
  '429',
  '500',
  '503',
  '507',
];

/**
 * Every route the app serves, as `METHOD /path/{param}`, as the HTTP adapter registered them
 * with Fastify. Catch-alls that only answer 405 for unsupported methods (`@All`) are not
 * endpoints of their own, and HEAD goes with GET.
 */
function servedRoutes(t: TestApp): string[] {
  const adapter = t.app.getHttpAdapter() as unknown as ApiHttpAdapter;
  return adapter.servedRoutes.flatMap(({ method, url }) => {
    // `/api/v1` itself answers as the index page `/` does (docs/api.md, Pages): no operation.
    if (!url.startsWith('/api/v1/') || method === 'HEAD') return [];
    return [`${method} ${url.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1')}`];
  });
}

describe('OpenAPI document', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let doc: OpenApi;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp, env: { SVC_ADMIN_EMAILS: 'docadmin@example.com' } });
    doc = (await t.http().get('/api/docs-json').expect(200)).body as OpenApi;
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const operations = (): Array<{ key: string; path: string; method: string; operation: Operation }> =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        key: `${method.toUpperCase()} ${path}`,
        path,
        method,
        operation,
      })),
    );
  const resolve = (schema: Schema): Schema =>
    schema.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;

  it('is OpenAPI 3 with the bearer scheme', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes.bearer).toEqual({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT or svcpat_ access token',
    });
  });

  it('declares the scope a personal access token needs on every operation that takes a token', () => {
    const scopeOf = (path: string, method: string) =>
      (doc.paths[path][method] as unknown as Record<string, unknown>)['x-svc-token-scope'];
    expect([
      scopeOf('/api/v1/community-plugins/me', 'get'),
      scopeOf('/api/v1/community-plugins/upload', 'post'),
      scopeOf('/api/v1/community-plugins/{id}/versions', 'post'),
      scopeOf('/api/v1/community-plugins/{id}/approve', 'post'),
      scopeOf('/api/v1/sessions', 'post'),
      scopeOf('/api/v1/account/tokens', 'get'),
      scopeOf('/api/v1/account/tokens', 'post'),
      scopeOf('/api/v1/account/totp', 'post'),
      scopeOf('/api/v1/account/totp/confirm', 'post'),
      scopeOf('/api/v1/account/totp', 'delete'),
      scopeOf('/api/v1/logout', 'get'),
      scopeOf('/api/v1/account/logins', 'get'),
      scopeOf('/api/v1/account/logins/{loginId}', 'delete'),
      scopeOf('/api/v1/account/logout-everywhere', 'post'),
      scopeOf('/api/v1/account/password', 'post'),
      scopeOf('/api/v1/login', 'post'),
    ]).toEqual([
      'read',
      'upload',
      'upload',
      'review',
      'none',
      'none',
      'none',
      'none',
      'none',
      'none',
      'none',
      'none',
      'none',
      'none',
      'none',
      undefined,
    ]);
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

  it('names each path parameter where its path has it, and only there', () => {
    for (const { key, path, operation } of operations()) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path');
      expect([key, parameters.map((parameter) => parameter.name)]).toEqual([key, inPath]);
      expect([key, parameters.every((parameter) => parameter.required === true)]).toEqual([key, true]);
    }
  });

  it('gives every operation a tag, a summary, a unique id, and errors in the fail envelope', () => {
    const ids = operations().map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => !/^\w+$/.test(id))).toEqual([]);
    const fail = doc.components.schemas.Fail;
    expect(fail.required).toEqual(['status', 'message']);
    expect(fail.properties?.status.enum).toEqual(['fail']);
    for (const { key, operation } of operations()) {
      expect([key, operation.tags?.length, typeof operation.summary]).toEqual([key, 1, 'string']);
      const statuses = Object.keys(operation.responses);
      expect([key, statuses.filter((status) => !STATUSES_IN_USE.includes(status))]).toEqual([key, []]);
      for (const status of statuses.filter((code) => Number(code) >= 400)) {
        const { content, description } = operation.responses[status];
        expect([key, status, content?.['application/json'].schema]).toEqual([
          key,
          status,
          { $ref: '#/components/schemas/Fail' },
        ]);
        expect(description).not.toBe('');
      }
    }
  });

  it('documents the upload as a multipart form with the binary plugin_file and its metadata parts', () => {
    const upload = doc.paths['/api/v1/community-plugins/upload'].post;
    expect(Object.keys(upload.requestBody!.content)).toEqual(['multipart/form-data']);
    const form = upload.requestBody!.content['multipart/form-data'].schema;
    expect(form.properties!.plugin_file).toMatchObject({ type: 'string', format: 'binary' });
    expect([...form.required!].sort()).toEqual([
      'author',
      'description',
      'group',
      'name',
      'plugin_file',
      'type',
    ]);
    expect(form.properties!.group.enum).toEqual([...PLUGIN_GROUPS]);
    expect(form.properties!.type.enum).toEqual([...PLUGIN_TYPES]);
    expect(form.properties!.execution_timeout).toMatchObject({
      type: 'integer',
      minimum: EXECUTION_TIMEOUT.min,
      maximum: EXECUTION_TIMEOUT.max,
    });
    for (const part of ['name', 'description', 'author']) expect(form.properties![part].type).toBe('string');
    expect(Object.keys(upload.responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '422',
      '429',
      '500',
      '503',
      '507',
    ]);
    const created = upload.responses['201'].content!['application/json'].schema;
    expect(created.properties!.data).toEqual({ $ref: '#/components/schemas/OwnerPlugin' });
  });

  it('documents the shapes the original web client reads', () => {
    const ok = (path: string, method: string, status = '200') =>
      doc.paths[path][method].responses[status].content!['application/json'].schema;
    // Account answers: the contract's members, and the same under data.
    const account = resolve(ok('/api/v1/register', 'post'));
    expect(Object.keys(account.properties!).sort()).toEqual(['data', 'email', 'message', 'status']);
    const accountData = account.properties!.data;
    expect(accountData.$ref ?? accountData.allOf?.[0].$ref).toBe('#/components/schemas/AccountResponseData');
    expect(Object.keys(doc.components.schemas.AccountResponseData.properties!).sort()).toEqual([
      'email',
      'message',
      'status',
    ]);
    for (const [path, method] of [
      ['/api/v1/logout', 'get'],
      ['/api/v1/generate/confirm_email', 'post'],
      ['/api/v1/verify/confirm_email/{keyValue}', 'get'],
      ['/api/v1/generate/otp', 'post'],
      ['/api/v1/verify/otp', 'post'],
      ['/api/v1/new-password', 'post'],
    ]) {
      expect([path, ok(path, method)]).toEqual([path, ok('/api/v1/register', 'post')]);
    }
    // Login: the token under message['jwt-token'] (and data.message), or a failure, told by status.
    expect(ok('/api/v1/login', 'post')).toEqual({
      oneOf: [
        { $ref: '#/components/schemas/LoginSucceeded' },
        { $ref: '#/components/schemas/AccountFailure' },
      ],
    });
    expect(doc.components.schemas.LoginToken).toMatchObject({
      properties: { 'jwt-token': { type: 'string' } },
      required: ['jwt-token'],
    });
    // Every plugin list is a page.
    const mine = resolve(ok('/api/v1/community-plugins/mine', 'get').properties!.data);
    expect(Object.keys(mine.properties!).sort()).toEqual(['limit', 'offset', 'plugins', 'total']);
    expect(mine.properties!.plugins.items).toEqual({ $ref: '#/components/schemas/OwnerPlugin' });
    const catalogue = doc.paths['/api/v1/community-plugins'].get;
    expect(catalogue.parameters!.map((parameter) => parameter.name)).toEqual(
      expect.arrayContaining(['tag', 'limit', 'offset']),
    );
    expect(doc.paths['/api/v1/community-plugins/mine'].get.parameters!.map((p) => p.name).sort()).toEqual([
      'limit',
      'offset',
    ]);
    // Cards: version, tags and approval_status in every view.
    for (const view of ['PublicPlugin', 'OwnerPlugin', 'AdminPlugin']) {
      expect(doc.components.schemas[view].properties).toMatchObject({
        version: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        approval_status: { type: 'string' },
      });
    }
    const form =
      doc.paths['/api/v1/community-plugins/upload'].post.requestBody!.content['multipart/form-data'].schema;
    expect(form.properties).toMatchObject({ version: { type: 'string' }, tags: { type: 'string' } });
    // Targets: a list of the active session's.
    expect(ok('/api/v1/targets', 'get').properties!.data).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Target' },
    });
  });

  it('documents the plugin views and the target with exactly the fields the code gives', () => {
    const plugin = Object.assign(new UserPlugin(), {
      id: 1,
      name: 'n',
      description: 'd',
      group: 'web',
      type: 'grep',
      author: 'a',
      status: 'approved',
      rejectionReason: null,
      userId: 2,
      reviewedByUserId: 3,
      reviewedAt: new Date(0),
      executionTimeout: 60,
      version: '1.0.0',
      tags: ['x'],
      sha256: 'ab'.repeat(32),
      filePath: 'n_0123.py',
      createdAt: new Date(0),
      updatedAt: new Date(0),
    });
    const target = Object.assign(new Target(), {
      id: 1,
      userId: 2,
      targetUrl: 'http://example.com/',
      targetUrlHash: 'ab'.repeat(32),
      urlScheme: 'http',
      hostName: 'example.com',
      portNumber: 80,
      hostPath: '/',
      scope: true,
      createdAt: new Date(0),
    });
    const documented = (name: string) => Object.keys(doc.components.schemas[name].properties!).sort();
    expect(documented('PublicPlugin')).toEqual(Object.keys(toPublicView(plugin)).sort());
    expect(documented('OwnerPlugin')).toEqual(Object.keys(toOwnerView(plugin)).sort());
    expect(documented('AdminPlugin')).toEqual(Object.keys(toAdminView(plugin)).sort());
    expect(documented('Target')).toEqual(Object.keys(toTargetView(target)).sort());
  });

  it('declares its server, the total count header, typed nulls and closed answer schemas', () => {
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) as string }]);
    expect(doc.paths['/api/v1/targets'].get.responses['200'].headers?.['X-Total-Count']).toMatchObject({
      required: true,
      schema: { type: 'integer' },
    });
    const deleted = doc.paths['/api/v1/community-plugins/{id}/delete'].delete.responses['200'];
    expect(resolve(deleted.content!['application/json'].schema).properties!.data).toMatchObject({
      type: 'string',
      nullable: true,
      enum: [null],
    });
    for (const view of ['PublicPlugin', 'OwnerPlugin', 'AdminPlugin', 'LoginSucceeded', 'Target']) {
      expect([view, doc.components.schemas[view].additionalProperties]).toEqual([view, false]);
    }
    // A refusal may carry more for its clients (findings under data).
    expect(doc.components.schemas.Fail.additionalProperties).toBeUndefined();
  });

  it('reports an answer that does not match, naming its operation, status and path', () => {
    const checker = new ResponseChecker(doc as unknown as ConstructorParameters<typeof ResponseChecker>[0]);
    const json = { 'content-type': 'application/json; charset=utf-8' };
    const list = (body: unknown, status = 200) =>
      checker.check('get', '/api/v1/sessions/', status, json, JSON.stringify(body));
    expect(list({ status: 'success', data: [{ id: 1, name: 'a', active: true }] })).toBeNull();
    expect(list({ status: 'success', data: [{ id: '1', name: 'a', active: true }] })).toMatch(
      /^GET \/api\/v1\/sessions \(SessionsController_\w+\) answered 200: \/data\/0\/id must be number/,
    );
    expect(list({ status: 'success', data: [{ id: 1, name: 'a', active: true, file_path: 'x' }] })).toContain(
      'must NOT have additional properties',
    );
    expect(list({ status: 'fail', message: 'x' }, 418)).toContain('a status the document does not declare');
    expect(checker.check('get', '/api/v1/targets/', 200, json, '{"status":"success","data":[]}')).toContain(
      'without the header X-Total-Count',
    );
  });

  it('documents the session path shapes each with the five methods, and their spec operations', () => {
    for (const path of [
      '/api/v1/sessions',
      '/api/v1/sessions/{session_id}',
      '/api/v1/sessions/{session_id}/{action}',
    ]) {
      expect([path, Object.keys(doc.paths[path]).sort()]).toEqual([
        path,
        ['delete', 'get', 'options', 'patch', 'post'],
      ]);
    }
    const data = (operation: Operation, status: string) =>
      resolve(operation.responses[status].content!['application/json'].schema).properties!.data;
    expect(data(doc.paths['/api/v1/sessions'].get, '200')).toMatchObject({ type: 'array' });
    expect(data(doc.paths['/api/v1/sessions/{session_id}'].get, '200')).toEqual({
      $ref: '#/components/schemas/SessionDetail',
    });
    expect(doc.paths['/api/v1/sessions'].post.responses['201']).toBeDefined();
    expect(doc.paths['/api/v1/sessions/{session_id}/{action}'].get.responses['422']).toBeDefined();
    // A shape the spec refuses documents no success.
    expect(Object.keys(doc.paths['/api/v1/sessions/{session_id}'].post.responses).sort()).toEqual([
      '400',
      '401',
      '403',
      '413',
      '415',
      '500',
      '503',
    ]);
  });

  describe('probed with a request for each documented operation', () => {
    let user: string;
    let admin: string;

    beforeAll(async () => {
      user = (await signUpAs(t, smtp, 'docuser')).token;
      admin = (await signUpAs(t, smtp, 'docadmin')).token;
    });

    /**
     * The operation's path with `1` for every parameter (`add` for an action) and no body;
     * GETs ask for `status=pending`, which only the catalogue reads and refuses to non-admins.
     */
    async function probe(method: string, path: string, token: string | null): Promise<[number, unknown]> {
      const url =
        path.replace('{action}', 'add').replace(/\{\w+\}/g, '1') +
        (method === 'get' ? '?status=pending' : '');
      const client = t.http() as unknown as Record<
        string,
        (url: string) => ReturnType<ReturnType<TestApp['http']>['get']>
      >;
      let request = client[method](url);
      if (token !== null) request = request.set('Authorization', `Bearer ${token}`);
      const response = await request;
      return [response.status, (response.body as { message?: unknown }).message];
    }
    const isPublic = (operation: Operation) => operation.security?.length === 0;
    // Probing logout with a real token would revoke it, and ending login 1 would end the probing
    // user's own (test/account-logins.e2e-spec.ts answers both).
    const signedIn = () =>
      operations().filter(
        ({ path }) => !['/api/v1/logout', '/api/v1/account/logins/{loginId}'].includes(path),
      );

    it('lists 401 on exactly the operations that need a token, and they answer 401 to a bad one', async () => {
      for (const { key, method, path, operation } of operations()) {
        expect([key, '401' in operation.responses]).toEqual([key, !isPublic(operation)]);
        if (isPublic(operation)) continue;
        expect([key, ...(await probe(method, path, 'not-a-token'))]).toEqual([key, 401, 'Unauthorized']);
      }
    });

    it('lists every status an operation answers to a user and to an admin', async () => {
      for (const { key, method, path, operation } of signedIn()) {
        for (const token of [user, admin]) {
          const [status] = await probe(method, path, token);
          expect([key, Object.keys(operation.responses)]).toEqual([
            key,
            expect.arrayContaining([String(status)]),
          ]);
        }
      }
    });

    it('lists 403 on exactly the operations that refuse a user who is not an admin, and never refuse an admin', async () => {
      // Other 403s (an admin reviewing their own upload, an author rating their own plugin) are the
      // operation's own; the admin refusal is the one listed with its message.
      const listing = signedIn()
        .filter(({ operation }) =>
          String(
            (operation.responses['403'] as { description?: string } | undefined)?.description ?? '',
          ).includes('Admin privileges required'),
        )
        .map(({ key }) => key);
      const refusals: Array<[string, unknown]> = [];
      for (const { key, method, path } of signedIn()) {
        const [status, message] = await probe(method, path, user);
        if (status === 403) refusals.push([key, message]);
        expect([key, (await probe(method, path, admin))[0]]).not.toEqual([key, 403]);
      }
      expect(refusals).toEqual(refusals.map(([key]) => [key, 'Admin privileges required']));
      const refusing = refusals.map(([key]) => key);
      expect(refusing.sort()).toEqual(listing.sort());
      expect(refusing).toEqual(
        expect.arrayContaining([
          'PATCH /api/v1/configuration',
          'POST /api/v1/community-plugins/{id}/approve',
        ]),
      );
    });
  });

  it('serves the Swagger UI', async () => {
    const response = await t.http().get('/api/docs/').expect(200);
    expect(response.text).toContain('swagger-ui');
  });
});
