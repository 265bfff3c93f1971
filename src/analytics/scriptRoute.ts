import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type express from 'express';
import type { Request, Response } from 'express';
import { ROOT } from '../paths';
import { qualities } from '../transport/respond';

/** Where Vigil's page script is served (under base_url). */
export const SCRIPT_PATH = '/js/script.js';

/**
 * The script's source. Read from the project's `src/` (as the contract files
 * are read from the root) so that it is the same file whether Vigil runs from
 * `src/` or compiled from `dist/` (tsc does not copy `.js` sources).
 */
export const SCRIPT_SOURCE = path.join(ROOT, 'src', 'analytics', 'script.js');

/** The script as served: its text, gzipped, and the tag of each. */
export interface ServedScript {
  body: Buffer;
  gzip: Buffer;
  etag: string;
  gzipEtag: string;
  minified: boolean;
}

/**
 * Minifies the source with esbuild when it is installed (a development
 * dependency: an install without it serves the source as written, which is
 * small enough too).
 */
export function minify(source: string): { code: string; minified: boolean } {
  try {
    const esbuild = require('esbuild') as typeof import('esbuild');
    const out = esbuild.transformSync(source, { minify: true, target: 'es2017', legalComments: 'none', charset: 'utf8' });
    return { code: out.code, minified: true };
  } catch {
    return { code: source, minified: false };
  }
}

/** Builds what is served from the source text. */
export function buildScript(source: string = fs.readFileSync(SCRIPT_SOURCE, 'utf8')): ServedScript {
  const { code, minified } = minify(source);
  const body = Buffer.from(code, 'utf8');
  const gzip = zlib.gzipSync(body, { level: 9 });
  const tag = createHash('sha256').update(body).digest('base64url').slice(0, 22);
  return { body, gzip, etag: `"${tag}"`, gzipEtag: `"${tag}-gz"`, minified };
}

/** True when If-None-Match names one of the tags (weak comparison, as for GET). */
function notModified(req: Request, tags: string[]): boolean {
  const header = req.headers['if-none-match'];
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => tags.includes(t.trim().replace(/^W\//, '')));
}

/** Serves the page script at `GET/HEAD /js/script.js`, minified once now. */
export function mountAnalyticsScript(app: express.Express, script: ServedScript = buildScript()): ServedScript {
  app.get(SCRIPT_PATH, (req: Request, res: Response) => {
    const enc = qualities(String(req.headers['accept-encoding'] ?? ''));
    const q = enc.get('gzip') ?? enc.get('*');
    const gz = q !== undefined && q > 0;
    res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.setHeader('Vary', 'Accept-Encoding');
    res.setHeader('ETag', gz ? script.gzipEtag : script.etag);
    // Loaded by other sites' pages: allowed under their cross-origin isolation and in CORS mode.
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (notModified(req, [script.etag, script.gzipEtag])) {
      res.status(304).end();
      return;
    }
    const body = gz ? script.gzip : script.body;
    if (gz) res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', String(body.length));
    res.status(200).end(body);
  });
  return script;
}
