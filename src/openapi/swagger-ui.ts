import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The Swagger UI page, served from swagger-ui-dist's files. SwaggerModule would serve them
 * through @fastify/static, which brings a glob and a content-disposition that need Node 22;
 * five fixed files do not need a static file server. The page loads everything from here,
 * so it works under the API's Content-Security-Policy (no inline script, no CDN).
 */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

export function serveSwaggerUi(app: NestFastifyApplication, uiPath: string, documentPath: string): void {
  const fastify = app.getHttpAdapter().getInstance();
  const base = `/${uiPath}`;
  const page = html(base);
  const initializer = initializerScript(`/${documentPath}`);
  const distDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();

  fastify.get(base, (_request, reply) => reply.type('text/html; charset=utf-8').send(page));
  fastify.get(`${base}/index.html`, (_request, reply) => reply.type('text/html; charset=utf-8').send(page));
  fastify.get(`${base}/swagger-initializer.js`, (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').send(initializer),
  );
  for (const [name, type] of Object.entries(ASSETS)) {
    fastify.get(`${base}/${name}`, (_request, reply) => {
      let content = cache.get(name);
      if (!content) {
        content = readFileSync(path.join(distDir, name));
        cache.set(name, content);
      }
      return reply.type(type).send(content);
    });
  }
}

function html(base: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>svc-api</title>
  <link rel="stylesheet" type="text/css" href="${base}/swagger-ui.css">
  <link rel="stylesheet" type="text/css" href="${base}/index.css">
  <link rel="icon" type="image/png" href="${base}/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${base}/favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${base}/swagger-ui-bundle.js"></script>
  <script src="${base}/swagger-ui-standalone-preset.js"></script>
  <script src="${base}/swagger-initializer.js"></script>
</body>
</html>
`;
}

function initializerScript(documentUrl: string): string {
  return `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(documentUrl)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;
}
