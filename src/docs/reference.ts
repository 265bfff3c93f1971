import { createHash } from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';
import type { Express, Request, Response } from 'express';
import { pageSecurityHeaders } from '../pipeline/html';
import { qualities } from '../transport/respond';

/** Where the interactive API reference is served (under base_url). */
export const DOCS_PATH = '/docs';

/**
 * The renderer: Redoc's standalone bundle (React and its styles inside one
 * file), served from the installed package, never from a CDN.
 */
const RENDERER = 'redoc/bundles/redoc.standalone.js';

/**
 * Starts Redoc on the page's container. A file of its own, because the
 * page's Content-Security-Policy lets no inline script run. URLs are taken
 * relative to the page (`/docs`), so a base_url with a path prefix works.
 */
const INIT = `(function () {
  var el = document.getElementById('redoc');
  var spec = new URL(el.getAttribute('data-spec'), document.baseURI).href;
  Redoc.init(spec, {
    hideDownloadButton: false,
    expandResponses: '200,201',
    jsonSampleExpandLevel: 3,
    sortTagsAlphabetically: false,
    theme: { typography: { fontFamily: 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif', headings: { fontFamily: 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif' } } }
  }, el);
})();
`;

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Vigil API reference</title>
<link rel="icon" href="data:,">
</head>
<body style="margin:0">
<noscript>The interactive reference needs JavaScript; the contract itself is at <a href="openapi.json">openapi.json</a>.</noscript>
<div id="redoc" data-spec="openapi.json"></div>
<script src="docs/assets/redoc.standalone.js"></script>
<script src="docs/assets/init.js"></script>
</body>
</html>
`;

/**
 * What the renderer needs and nothing more: scripts from this origin only
 * (no inline script, no eval), the contract fetched from this origin, inline
 * styles (styled-components writes its rules into <style> elements at run
 * time, so no hash can be known), the search index's worker started from a
 * blob: URL, icons as data: URLs.
 */
const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:",
  "connect-src 'self'", "worker-src 'self' blob:", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

/**
 * The one address outside this origin the bundle reaches on its own: the
 * Redocly logo beside its attribution in the sidebar. The page may load
 * nothing from elsewhere, so the bundle as served shows an empty image
 * there instead (the attribution text stays).
 */
const FOREIGN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_IMAGE = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%221%22 height=%221%22/%3E';

function rendererSource(): Buffer {
  return Buffer.from(fs.readFileSync(require.resolve(RENDERER), 'utf8').split(FOREIGN_LOGO).join(EMPTY_IMAGE), 'utf8');
}

interface Asset { type: string; body: Buffer; gzip: Buffer; etag: string }

function asset(type: string, body: Buffer): Asset {
  return { type, body, gzip: zlib.gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

function send(req: Request, res: Response, a: Asset, cache: string): void {
  res.setHeader('Content-Type', a.type);
  res.setHeader('Cache-Control', cache);
  res.setHeader('ETag', a.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (req.headers['if-none-match'] === a.etag) { res.status(304).end(); return; }
  const gz = (qualities(String(req.headers['accept-encoding'] ?? '')).get('gzip') ?? 0) > 0;
  if (gz) res.setHeader('Content-Encoding', 'gzip');
  const body = gz ? a.gzip : a.body;
  res.setHeader('Content-Length', String(body.length));
  res.status(200).end(req.method === 'HEAD' ? undefined : body);
}

/**
 * `GET /docs`: the interactive API reference, rendered in the browser by
 * Redoc from the served `/openapi.json`. The bundle is read once, lazily
 * (the first visit pays for it, a server that is never asked does not).
 */
export function mountDocs(app: Express): void {
  let assets: Record<string, Asset> | null = null;
  const load = () => (assets ??= {
    'redoc.standalone.js': asset('text/javascript; charset=utf-8', rendererSource()),
    'init.js': asset('text/javascript; charset=utf-8', Buffer.from(INIT, 'utf8')),
    page: asset('text/html; charset=utf-8', Buffer.from(PAGE, 'utf8')),
  });
  app.get(DOCS_PATH, (req, res, next) => {
    // `/docs/` would resolve the page's relative URLs under /docs/: send it to `/docs`.
    if (req.path.endsWith('/')) { res.redirect(308, '../docs'); return; }
    pageSecurityHeaders(res, CSP);
    // The page is small and names no version: always checked again, so a new release shows at once.
    try { send(req, res, load().page, 'no-cache'); } catch (e) { next(e); }
  });
  app.get(`${DOCS_PATH}/assets/:file`, (req, res, next) => {
    try {
      const a = load()[req.params.file as string];
      if (!a || req.params.file === 'page') return next();
      send(req, res, a, 'public, max-age=3600');
    } catch (e) { next(e); }
  });
}
