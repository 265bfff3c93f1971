/**
 * The pages people visit: `{base_url}/status/<slug>/…` and, once verified, the
 * same paths at the root of the page's custom domain (chosen by `Host`, so
 * any reverse proxy in front works). Rendered pages come from the page cache
 * (no database work per visit); every answer carries a strict
 * Content-Security-Policy, `nosniff` and `no-referrer`.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Db } from '../db/connect';
import { clockOf } from '../db/connect';
import { ApiError } from '../pipeline/errors';
import { escapeHtml, pageSecurityHeaders } from '../pipeline/html';
import type { RateLimits } from '../pipeline/ratelimit';
import type { Services } from '../pipeline/context';
import { BODY_LIMITS, drainUnread, readBody, readForm } from '../transport/body';
import { PageCache, variant, type Variant } from './cache';
import { certificateAllowed, pageForHost } from './domains';
import { translator } from './i18n';
import type { PageModel } from './model';
import { renderMessage, renderPage, renderPasswordForm, type Place } from './render/page';
import { badgeSvg, pageFeed, statusJson, summaryJson } from './render/machine';
import { passwordMatches } from './settings';
import { confirmSubscription, subscribe, subscriberForLink, unsubscribe } from './subscribers';

/** What the public pages use. */
export interface PublicDeps { db: Db; services: Services; limits: RateLimits }

const SESSION = 'status-page-session';
const SESSION_DAYS = 30;
const JSON_TYPE = 'application/json; charset=utf-8';

/** Where this request reached the page: its link prefix and its canonical URL. */
function placeOf(res: Response): Place {
  return res.locals.statusPlace as Place;
}


function acceptsGzip(req: Request): boolean {
  return /\bgzip\b/i.test(String(req.headers['accept-encoding'] ?? '')) && !/\bgzip\s*;\s*q=0(\.0*)?\b/i.test(String(req.headers['accept-encoding']));
}

/** Sends a prepared rendering: gzip when accepted, 304 for a matching ETag, cacheable by others only for public pages. */
function sendVariant(req: Request, res: Response, v: Variant, isPublic: boolean, status = 200): void {
  pageSecurityHeaders(res, v.csp);
  res.setHeader('Content-Type', v.contentType);
  res.setHeader('Vary', 'Accept-Encoding, Cookie');
  res.setHeader('Cache-Control', isPublic ? 'public, max-age=15' : 'private, no-store');
  if (isPublic && !v.contentType.startsWith('text/html')) res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('ETag', v.etag);
  if (status === 200 && req.headers['if-none-match'] === v.etag) {
    res.status(304).end();
    return;
  }
  const gzip = acceptsGzip(req);
  const body = gzip ? v.gzip : v.body;
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', String(body.length));
  res.status(status).end(req.method === 'HEAD' ? undefined : body);
}

/** A one-off HTML document (forms, messages): never cached by anyone. */
function sendDocument(req: Request, res: Response, status: number, doc: { html: string; csp: string }): void {
  drainUnread(req);
  sendVariant(req, res, variant(doc.html, 'text/html; charset=utf-8', doc.csp), false, status);
}

function notFoundPage(req: Request, res: Response): void {
  drainUnread(req);
  pageSecurityHeaders(res, null);
  const html = '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>Not found</title></head><body><h1>Not found</h1><p>There is no status page here.</p></body></html>';
  res.status(404).setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'private, no-store');
  res.end(html);
}

function cookieName(pageId: string): string {
  return `vigil_sp_${pageId}`;
}

function readCookie(req: Request, name: string): string | null {
  for (const part of String(req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return null;
}

/** True when the request carries a valid session cookie of this password page (a new password ends old ones). */
function hasSession(req: Request, m: PageModel, services: Services): boolean {
  const value = readCookie(req, cookieName(m.page.id));
  const [expires, mac] = (value ?? '').split('.');
  if (!expires || !mac || Number(expires) * 1000 < Date.now()) return false;
  return services.secrets.verify(SESSION, `${m.page.id}.${expires}.${m.passwordFingerprint}`, mac);
}

function isHttps(req: Request, services: Services): boolean {
  return req.secure || String(req.headers['x-forwarded-proto'] ?? '').split(',')[0].trim() === 'https' || services.baseUrl().startsWith('https:');
}

function setSession(req: Request, res: Response, m: PageModel, services: Services): void {
  const expires = Math.floor(Date.now() / 1000) + SESSION_DAYS * 86_400;
  const mac = services.secrets.sign(SESSION, `${m.page.id}.${expires}.${m.passwordFingerprint}`);
  const path = placeOf(res).prefix || '/';
  res.append('Set-Cookie', `${cookieName(m.page.id)}=${expires}.${mac}; Path=${path}; Max-Age=${SESSION_DAYS * 86_400}; HttpOnly; SameSite=Lax${isHttps(req, services) ? '; Secure' : ''}`);
}


const wantsJson = (req: Request) => /^application\/json\b/i.test(String(req.headers['content-type'] ?? '')) || /application\/json/i.test(String(req.headers.accept ?? ''));

/** The routes of one page, relative to where it is served (`/status/<slug>` or a custom domain's root). */
function pageRoutes(deps: PublicDeps, cache: PageCache): Router {
  const { db, services, limits } = deps;
  const router = express.Router();

  /** The page if this visitor may see it; answers (404, or the password form) and returns null otherwise. */
  const admit = async (req: Request, res: Response, html: boolean): Promise<PageModel | null> => {
    const m = await cache.model(res.locals.statusSlug as string);
    if (!m || m.page.visibility === 'private') { notFoundPage(req, res); return null; }
    if (m.page.visibility === 'password' && !(m.passwordFingerprint && hasSession(req, m, services))) {
      // The form is what this address shows until the password is given (200); the twins refuse (403: a 401 would need an HTTP auth scheme).
      if (html) sendDocument(req, res, 200, renderPasswordForm(m, placeOf(res), null));
      else { drainUnread(req); pageSecurityHeaders(res, null); res.status(403).setHeader('Cache-Control', 'private, no-store'); res.end(); }
      return null;
    }
    return m;
  };

  const serve = (name: string, contentType: string, render: (m: PageModel, place: Place) => { text: string; csp?: string }, html = false) =>
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        const m = await admit(req, res, html);
        if (!m) return;
        const place = placeOf(res);
        const v = await cache.variant(m.page.slug, `${name}\u0000${place.prefix}\u0000${place.url}`, (model) => {
          const r = render(model, place);
          return variant(r.text, contentType, r.csp ?? null);
        });
        if (!v) return notFoundPage(req, res);
        sendVariant(req, res, v, m.page.visibility === 'public');
      } catch (e) {
        next(e);
      }
    };

  router.get('/', serve('html', 'text/html; charset=utf-8', (m, place) => {
    const r = renderPage(m, place);
    return { text: r.html, csp: r.csp };
  }, true));
  router.get('/api/v2/summary.json', serve('summary', JSON_TYPE, (m, place) => ({ text: summaryJson(m, place) })));
  router.get('/api/v2/status.json', serve('status', JSON_TYPE, (m, place) => ({ text: statusJson(m, place) })));
  router.get('/feed.xml', serve('rss', 'application/rss+xml; charset=utf-8', (m, place) => ({ text: pageFeed('rss', m, place) })));
  router.get('/atom.xml', serve('atom', 'application/atom+xml; charset=utf-8', (m, place) => ({ text: pageFeed('atom', m, place) })));
  router.get('/badge.svg', serve('badge', 'image/svg+xml; charset=utf-8', (m) => ({ text: badgeSvg(m) })));

  // The password form posts here; a right password sets the session cookie and goes back to the page.
  router.post('/', async (req, res, next) => {
    try {
      const m = await cache.model(res.locals.statusSlug as string);
      if (!m || m.page.visibility !== 'password' || !m.passwordFingerprint) return notFoundPage(req, res);
      const place = placeOf(res);
      try {
        await limits.consume(`${m.page.id}:${req.ip ?? ''}`, 'page_password');
      } catch (e) {
        if (e instanceof ApiError && e.status === 429) {
          for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
          return sendDocument(req, res, 429, renderPasswordForm(m, place, 'tooMany'));
        }
        throw e;
      }
      const { password = '' } = await readForm(req, BODY_LIMITS.statusPageForm);
      const row = await db.selectFrom('status_pages').select('password_hash').where('id', '=', m.page.id).executeTakeFirst();
      if (!row?.password_hash || !(await passwordMatches(password, row.password_hash))) {
        return sendDocument(req, res, 403, renderPasswordForm(m, place, 'wrong'));
      }
      setSession(req, res, m, services);
      pageSecurityHeaders(res, null);
      res.setHeader('Cache-Control', 'private, no-store');
      res.redirect(303, place.prefix || '/');
    } catch (e) {
      next(e);
    }
  });

  router.post('/subscribe', async (req, res, next) => {
    const json = wantsJson(req);
    try {
      const m = await admit(req, res, !json);
      if (!m) return;
      const t = translator(m.page.language);
      const place = placeOf(res);
      const answer = (status: number, text: string, error: boolean, code?: string) => {
        if (json) {
          drainUnread(req);
          pageSecurityHeaders(res, null);
          res.status(status).setHeader('Cache-Control', 'private, no-store');
          res.json(error ? new ApiError(status, code ?? 'invalid_field', text).toBody() : { status: code, message: text });
          return;
        }
        sendDocument(req, res, status, renderMessage(m, place, t('subscribe.title'), `<p class="notice${error ? ' error' : ''}" role="status">${escapeHtml(text)}</p>`));
      };
      try {
        await limits.consume(`${m.page.id}:${req.ip ?? ''}`, 'page_subscribe');
        const done = await subscribe(db, services, m, await readForm(req, BODY_LIMITS.statusPageForm));
        if (done.kind === 'email') return answer(202, t('subscribe.sent', { email: done.address }), false, 'confirmation_sent');
        return answer(201, t('subscribe.webhookDone', { host: done.host }), false, 'subscribed');
      } catch (e) {
        if (!(e instanceof ApiError) || e.status >= 500 && e.status !== 502) throw e;
        if (json) {
          drainUnread(req);
          pageSecurityHeaders(res, null);
          for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
          res.status(e.status).setHeader('Cache-Control', 'private, no-store');
          res.json(e.toBody());
          return;
        }
        const text = e.code === 'subscriptions_closed' ? t('subscribe.closed') : e.status === 429 ? t('password.tooMany') : e.status === 502 ? e.message : t('subscribe.invalid');
        return answer(e.status, text, true, e.code);
      }
    } catch (e) {
      next(e);
    }
  });

  router.get('/subscribers/confirm/:token', async (req, res, next) => {
    try {
      const m = await admit(req, res, true);
      if (!m) return;
      const t = translator(m.page.language);
      const done = await confirmSubscription(db, m.page.slug, String(req.params.token));
      const text = done ? t('subscribe.confirmed', { page: m.page.name }) : t('link.invalid');
      sendDocument(req, res, done ? 200 : 404, renderMessage(m, placeOf(res), t('subscribe.title'), `<p class="notice" role="status">${escapeHtml(text)}</p>`));
    } catch (e) {
      next(e);
    }
  });

  // GET asks (mail scanners follow links); POST unsubscribes, including RFC 8058 one-click from mail clients.
  router.all('/unsubscribe/:id/:mac', async (req, res, next) => {
    try {
      const m = await cache.model(res.locals.statusSlug as string);
      if (!m || (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'HEAD')) return notFoundPage(req, res);
      const t = translator(m.page.language);
      const sub = await subscriberForLink(db, services.secrets, m.page.slug, String(req.params.id), String(req.params.mac));
      const place = placeOf(res);
      if (!sub) return sendDocument(req, res, 404, renderMessage(m, place, t('unsubscribe.button'), `<p class="notice">${escapeHtml(t('link.invalid'))}</p>`));
      const target = sub.target;
      if (req.method === 'POST') {
        await readBody(req, BODY_LIMITS.statusPageForm);
        await unsubscribe(db, sub.id);
        return sendDocument(req, res, 200, renderMessage(m, place, t('unsubscribe.button'), `<p class="notice" role="status">${escapeHtml(t('unsubscribe.done', { page: m.page.name, target }))}</p>`));
      }
      const form = `<p>${escapeHtml(t('unsubscribe.ask', { page: m.page.name, target }))}</p><form method="post" action="${escapeHtml(`${place.prefix}/unsubscribe/${sub.id}/${String(req.params.mac)}`)}"><button type="submit">${escapeHtml(t('unsubscribe.button'))}</button></form>`;
      sendDocument(req, res, 200, renderMessage(m, place, t('unsubscribe.button'), form));
    } catch (e) {
      next(e);
    }
  });
  return router;
}

/**
 * Mounts the public status pages on `app`: `/status/<slug>/…`, the same on
 * verified custom domains, and `/tls/ask` for on-demand TLS. Returns the page
 * cache (the benchmark and the tests count its loads).
 */
export function mountStatusPages(app: express.Express, deps: PublicDeps): PageCache {
  const cache = new PageCache(deps.db, clockOf(deps.db));
  const routes = pageRoutes(deps, cache);
  const base = () => { try { return new URL(deps.services.baseUrl()).host.toLowerCase(); } catch { return ''; } };

  // A verified custom domain: the page's paths at the root; nothing else of Vigil is served there.
  app.use(async (req, res, next) => {
    const host = String(req.headers.host ?? '').toLowerCase();
    if (!host || host === base() || /^(localhost|\[?[0-9a-f:.]+\]?)(:\d+)?$/.test(host)) return next();
    try {
      const slug = await pageForHost(deps.db, host);
      if (!slug) return next();
      res.locals.statusSlug = slug;
      res.locals.statusPlace = { prefix: '', url: `${isHttps(req, deps.services) ? 'https' : 'http'}://${host.replace(/:\d+$/, '')}` } satisfies Place;
      routes(req, res, () => notFoundPage(req, res));
    } catch (e) {
      next(e);
    }
  });

  app.use('/status/:slug', (req, res, next) => {
    const slug = String(req.params.slug);
    res.locals.statusSlug = slug;
    res.locals.statusPlace = { prefix: `/status/${slug}`, url: `${deps.services.baseUrl()}/status/${slug}` } satisfies Place;
    routes(req, res, () => notFoundPage(req, res));
  });

  // Caddy's on-demand TLS asks before it gets a certificate: only for a verified custom domain of a page served there (not private).
  app.get('/tls/ask', async (req, res, next) => {
    try {
      const domain = typeof req.query.domain === 'string' ? req.query.domain : '';
      const ok = domain !== '' && (await certificateAllowed(deps.db, domain));
      res.status(ok ? 200 : 404).setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.end(ok ? 'ok' : 'not a verified status page domain');
    } catch (e) {
      next(e);
    }
  });
  return cache;
}
