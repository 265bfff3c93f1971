/**
 * The web app (built from web/ into dist/web by `npm run build`) at the base
 * URL: hashed files under /assets cached for a year, index.html never cached,
 * and index.html for every other GET so the app's own routes (/monitors/…)
 * work when opened directly — except under the paths the server answers
 * itself, which keep their own answers, 404 included. Mounted last, before
 * the final 404: nothing mounted earlier can be shadowed.
 */
import fs from 'node:fs';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ROOT } from '../paths';

const WEB_DIST = path.join(ROOT, 'dist/web');

/**
 * Path prefixes that belong to the server (src/transport/app.ts and what it
 * mounts): the API, Connect, MCP, the contract, public pages, ingestion,
 * health and metrics. The app never answers under them.
 */
export const SERVER_PREFIXES = [
  '/api', '/rpc', '/mcp', '/openapi.json', '/docs', '/status', '/tls', '/invitations', '/password-reset', '/confirm',
  '/feeds', '/ping', '/probe', '/agent', '/metrics', '/healthz', '/readyz', '/webhooks', '/js',
];

/** The app's policy: its own scripts, styles and calls only; nothing inline, nothing from elsewhere. */
export const WEB_APP_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'",
  "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

const reserved = (p: string) => SERVER_PREFIXES.some((x) => p === x || p.startsWith(`${x}/`) || p.startsWith(`${x}.`));

function secure(res: Response): void {
  res.setHeader('Content-Security-Policy', WEB_APP_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('X-Frame-Options', 'DENY');
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/**
 * The build's gzipped twin of a script or style sheet (`x.js.gz`, made by
 * `npm run build`), for a client that takes gzip; false when there is none
 * or the client does not take it (the plain file is served then).
 */
function sendGzipped(dir: string, req: Request, res: Response): boolean {
  const type = TYPES[path.extname(req.path)];
  if (!type || !/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) return false;
  const file = path.join(dir, path.normalize(req.path).replace(/^(\.\.[/\\])+/, ''));
  if (!file.startsWith(path.join(dir, 'assets') + path.sep)) return false;
  let body: Buffer;
  try { body = fs.readFileSync(`${file}.gz`); } catch { return false; }
  secure(res);
  res.status(200).setHeader('Content-Type', type);
  res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('Content-Length', String(body.length));
  res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}

/** The middleware serving the app; passes on (to the 404) when the app is not built. */
export function webApp(dir = WEB_DIST): express.RequestHandler {
  // Both serve files of `dir` by the request's path (/assets/x.js is dir/assets/x.js); only their caching differs.
  const assets = express.static(dir, {
    index: false, fallthrough: true, etag: false,
    setHeaders: (res) => { secure(res as Response); res.setHeader('Cache-Control', 'public, max-age=31536000, immutable'); },
  });
  const rootFiles = express.static(dir, {
    index: false, fallthrough: true, etag: false,
    setHeaders: (res, file) => {
      secure(res as Response);
      res.setHeader('Cache-Control', path.basename(file) === 'index.html' ? 'no-cache' : 'public, max-age=86400');
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || reserved(req.path)) return next();
    if (req.path.startsWith('/assets/')) {
      if (sendGzipped(dir, req, res)) return;
      return assets(req, res, next);
    }
    if (/^\/[^/]+\.[a-z0-9]+$/i.test(req.path) && req.path !== '/index.html') return rootFiles(req, res, next);
    // Read each time (a few hundred bytes): a rebuild while running is served at once.
    fs.readFile(path.join(dir, 'index.html'), (err, html) => {
      if (err) return next();
      secure(res);
      res.status(200).setHeader('Content-Type', 'text/html; charset=utf-8');
      res.setHeader('Cache-Control', 'no-cache');
      res.end(req.method === 'HEAD' ? undefined : html);
    });
  };
}
