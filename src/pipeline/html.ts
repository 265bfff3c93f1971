import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Drops characters XML 1.0 (and so XHTML, SVG, RSS and Atom) cannot carry: controls, lone surrogates, U+FFFE/U+FFFF. */
export function xmlSafe(s: string): string {
  return s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '');
}

/** A whole HTML document and the Content-Security-Policy that goes with it. */
export interface HtmlDocument { html: string; csp: string }

/**
 * A complete document for Vigil's own pages (status pages, invitations): all
 * styles in one inline `<style>` whose SHA-256 is the only style source the
 * Content-Security-Policy allows; no script may run at all; images only from
 * the page itself, `data:` URLs and `imgOrigins`; forms post only to the
 * page's own origin. `head` is trusted markup (links, meta); `body` too —
 * callers escape what they put in it.
 */
export function htmlDocument(o: { lang: string; title: string; css: string; body: string; head?: string; noindex?: boolean; imgOrigins?: string[] }): HtmlDocument {
  const hash = createHash('sha256').update(o.css, 'utf8').digest('base64');
  const html = `<!doctype html>
<html lang="${escapeHtml(o.lang)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${o.noindex ? '<meta name="robots" content="noindex">' : ''}
<title>${escapeHtml(o.title)}</title>${o.head ?? ''}
<style>${o.css}</style></head>
<body><main>${o.body}</main></body>
</html>
`;
  const img = ["'self'", 'data:', ...(o.imgOrigins ?? [])].join(' ');
  const csp = [
    "default-src 'none'", `style-src 'sha256-${hash}'`, `img-src ${img}`, "font-src 'self' data:", "script-src 'none'",
    "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp };
}

/** Headers of every public page Vigil renders: its CSP (or none allowed at all), no sniffing, no referrer, no framing. */
export function pageSecurityHeaders(res: ServerResponse, csp: string | null): void {
  res.setHeader('Content-Security-Policy', csp ?? "default-src 'none'; frame-ancestors 'none'");
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
}
