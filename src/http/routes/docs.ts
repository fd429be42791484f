/**
 * Interactive documentation served from npm packages (no CDN, works offline): Swagger UI at
 * /docs, ReDoc at /redoc, and the contract itself at /openapi.json and /openapi.yaml.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { Router } from 'express';
import type { Contract } from '../support/openapi.ts';
import { pageHeaders } from '../middleware/page-headers.ts';

const require = createRequire(import.meta.url);
const swaggerUiDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const redocBundle = require.resolve('redoc/bundles/redoc.standalone.js');

const SWAGGER_INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout'
  });
};
`;

const REDOC_PAGE = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>MUD Server API – ReDoc</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><div id="redoc"></div>
<script src="/redoc/redoc.standalone.js"></script>
<script src="/redoc/init.js"></script>
</body></html>
`;

const REDOC_INIT = `Redoc.init('/openapi.json', {}, document.getElementById('redoc'));\n`;

/**
 * Both pages run only our own scripts (no inline ones: their initializers are separate files),
 * may not be framed, and talk only to this server. Both UIs set inline styles and use data:
 * images; ReDoc runs its search index in a blob: worker.
 */
const securityHeaders = pageHeaders([
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
]);

export function docsRouter(contract: Contract): Router {
  const router = Router();
  const json = JSON.stringify(contract.document);
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(json);
  });
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(contract.yaml);
  });
  router.use(['/docs', '/redoc'], securityHeaders);
  // The packaged initializer points at the petstore demo; serve ours before the static files.
  router.get('/docs/swagger-initializer.js', (_req, res) => {
    res.type('application/javascript').send(SWAGGER_INITIALIZER);
  });
  router.get('/docs', (req, res, next) => {
    // Relative asset URLs in index.html need the trailing slash.
    if (!req.originalUrl.endsWith('/')) return res.redirect(301, '/docs/');
    next();
  });
  router.use('/docs', express.static(swaggerUiDir, { index: 'index.html' }));
  router.get('/redoc', (_req, res) => {
    res.type('html').send(REDOC_PAGE);
  });
  router.get('/redoc/redoc.standalone.js', (_req, res) => {
    res.sendFile(redocBundle);
  });
  router.get('/redoc/init.js', (_req, res) => {
    res.type('application/javascript').send(REDOC_INIT);
  });
  return router;
}
