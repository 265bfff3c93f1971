/**
 * Plausible's Events API at `POST {base_url}/api/event`, unchanged
 * (docs/analytics.md steps 1–3), so the official tracker and Vigil's own
 * script post to it: a JSON body sent as text/plain (no preflight) or
 * application/json, answered `202 ok` once the parsed event is committed to
 * `analytics_buffer` (group commit), `400 {"errors":{field:[message]}}` when
 * malformed. Bots, unknown sites and `X-Plausible-IP-Type: dc_ip|threat_ip`
 * are answered 202 with `x-plausible-dropped`. Nothing of the IP or the user
 * agent is kept but the visitor hash, the country and the browser, OS and
 * device names. The client IP is the socket's, or the one the proxies named
 * by TRUST_PROXY report (as Express's `req.ip`). The server takes events to
 * its own host before Express (withEventFastPath); the app's route answers
 * the rest the same way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { domainToASCII } from 'node:url';
import type express from 'express';
import { cachedRows, peekCachedRows, type Db } from '../db/connect';
import { bufferWriter } from '../ingest/buffer';
import type { Logger } from '../log';
import { ApiError } from '../pipeline/errors';
import type { RateLimits } from '../pipeline/ratelimit';
import { drainUnread, readBody } from '../transport/body';
import { withFastPath, type Listener } from '../transport/fastPath';
import { ANALYTICS_BUFFER, type BufferedEvent } from './drain';
import { EventError, parseBody, parseEvent, sanitizeHostname, type ParsedEvent } from './event';
import { countryOf } from './geo';
import { parseAgent } from './ua';
import { SESSION_GAP_MS } from './count';
import { analyticsClock, Salts, SiteGone, utcDay, visitorId, type SaltKey } from './visitor';

const DAY_MS = 86_400_000;

/** Where events are posted (Plausible's path, under base_url). */
export const EVENT_PATH = '/api/event';
/**
 * How long an event waits for others to share its INSERT and commit (the
 * buffer's default is 2 ms). Nobody waits on the answer (the tracker sends
 * and forgets), and under load batches of ~75 events instead of ~30 cost
 * PostgreSQL about a fifth less per event (bench:analytics: 51 → 42 µs).
 */
const GATHER_MS = 5;
/** A body over this is refused (413): an event is a few hundred bytes; 30 props at their limits stay under it. */
export const MAX_EVENT_BODY = 64 * 1024;

const CORS: Record<string, string> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': 'content-type',
  'Access-Control-Expose-Headers': 'x-plausible-dropped',
  'Access-Control-Max-Age': '86400',
};

interface Site { id: string; domain: string }
/** The read-cache key of a site by the domain (or public id) an event names, and the table it comes from. */
const siteKey = (d: string) => `analytics_site:${d}`;
const SITE_TABLES = ['analytics_sites'];

function send(res: ServerResponse, status: number, body: string, type: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...CORS, ...headers, 'Content-Type': type, 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(body)) });
  res.end(body);
}
/** The answer almost every event gets, its headers made once (as the flat list writeHead takes). */
const OK_HEADERS = Object.entries({ ...CORS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': '2' }).flat();
const accepted = (res: ServerResponse, dropped = 0) => {
  if (dropped > 0) return send(res, 202, 'ok', 'text/plain; charset=utf-8', { 'x-plausible-dropped': String(dropped) });
  res.writeHead(202, OK_HEADERS);
  res.end('ok');
};
const refused = (res: ServerResponse, status: number, field: string, message: string, headers: Record<string, string> = {}) =>
  send(res, status, JSON.stringify({ errors: { [field]: [message] } }), 'application/json; charset=utf-8', headers);
const PREFLIGHT_HEADERS = Object.entries(CORS).flat();

/** Event ingestion of one database handle: the Express route and the server's fast path share its batches and caches. */
export interface EventIngestion {
  /** Answers one `POST /api/event` from client address `ip`. Never throws. */
  accept(req: IncomingMessage, res: ServerResponse, ip: string): Promise<void>;
  /** Answers the CORS preflight. */
  preflight(res: ServerResponse): void;
  /** Writes what is pending (shutdown). */
  flush(): Promise<void>;
}

const ingestions = new WeakMap<Db, EventIngestion>();

/** The event ingestion of `db` (one per database handle). */
export function eventIngestionFor(db: Db, log: Logger, limits: RateLimits): EventIngestion {
  let i = ingestions.get(db);
  if (!i) ingestions.set(db, (i = eventIngestion(db, log, limits)));
  return i;
}

function eventIngestion(db: Db, log: Logger, limits: RateLimits): EventIngestion {
  const salts = new Salts(db);
  const buffer = bufferWriter(db, ANALYTICS_BUFFER, { delayMs: GATHER_MS });

  // From the read cache until analytics_sites changes in any process: a new site counts at once, a deleted one stops.
  // A domain as sites store it (sites.ts normaliseDomain): lower case, no `www.` or final dot, IDNs in punycode.
  const loadSite = async (d: string): Promise<Site | null> => {
    const host = sanitizeHostname(d).replace(/\.$/, '');
    const domains = [...new Set([d.toLowerCase(), host, domainToASCII(host)])].filter(Boolean);
    const [row] = await cachedRows(db, siteKey(d), SITE_TABLES, () =>
      db.selectFrom('analytics_sites').select(['id', 'domain'])
        .where((eb) => eb.or([eb('domain', 'in', domains), eb('public_id', '=', d)]))
        .limit(1).execute());
    return row ?? null;
  };
  /** The site `d` names: without a promise while the read cache holds it (nearly every event). */
  const siteOf = (d: string): Site | null | Promise<Site | null> => {
    const rows = peekCachedRows<Site>(db, siteKey(d), SITE_TABLES);
    return rows ? rows[0] ?? null : loadSite(d);
  };
  /** The sites of `domains` in order (null: unknown), a promise only when one is not cached. */
  const sitesOf = (domains: string[]): (Site | null)[] | Promise<(Site | null)[]> => {
    let loading = false;
    const found = domains.map((d) => {
      const s = siteOf(d);
      if (s instanceof Promise) loading = true;
      return s;
    });
    return loading ? Promise.all(found) : (found as (Site | null)[]);
  };

  const rowFor = (ev: ParsedEvent, site: Site, at: Date, salt: SaltKey, previous: SaltKey | null, ip: string, ua: string, agent: ReturnType<typeof parseAgent>, country: string | null): BufferedEvent => {
    // A referral from the site's own domain is none, as one from the page's own host is (event.ts).
    const self = ev.referrerSource === site.domain;
    return {
      site_id: site.id, at, name: ev.name, pathname: ev.pathname, hostname: ev.hostname,
      referrer: self ? null : ev.referrer, referrer_source: self ? null : ev.referrerSource,
      country, browser: agent.browser, os: agent.os, device: agent.device,
      utm_source: ev.utmSource, utm_medium: ev.utmMedium, utm_campaign: ev.utmCampaign,
      props: ev.props, visitor: visitorId(salt, ip, ua, site.domain), interactive: ev.interactive,
      previous_visitor: previous ? visitorId(previous, ip, ua, site.domain) : null,
    };
  };

  return {
    async accept(req, res, ip) {
      try {
        const ev = parseEvent(parseBody(await readBody(req, MAX_EVENT_BODY)));
        if (req.headers['x-debug-request'] === 'true') return send(res, 200, ip, 'text/plain; charset=utf-8');
        const ipType = req.headers['x-plausible-ip-type'];
        const ua = req.headers['user-agent'];
        const agent = parseAgent(ua);
        if (agent.bot || ipType === 'dc_ip' || ipType === 'threat_ip') return accepted(res, ev.domains.length);
        let found = sitesOf(ev.domains);
        if (found instanceof Promise) found = await found;
        let sites: Site[];
        let known: number;
        if (found.length === 1) {
          sites = found[0] ? [found[0]] : [];
          known = sites.length;
        } else {
          const listed = found.filter((s): s is Site => s !== null);
          sites = [...new Map(listed.map((s) => [s.id, s])).values()];
          known = listed.length;
        }
        const unknown = ev.domains.length - known;
        // Engagement (time on page, scroll depth) is validated and not counted: visit duration comes from the events themselves.
        if (sites.length === 0 || ev.engagement) return accepted(res, ev.engagement ? unknown : ev.domains.length);
        const at = analyticsClock.now();
        const day = utcDay(at);
        const country = countryOf(ip);
        const rows: BufferedEvent[] = [];
        for (const site of sites) {
          // A site over ANALYTICS_EVENTS_PER_SITE_PER_MINUTE drops the event, as Plausible drops a throttled one (202, counted in x-plausible-dropped).
          try {
            await limits.consume(`site:${site.id}`, 'analytics_site');
          } catch (e) {
            if (!(e instanceof ApiError) || e.status !== 429) throw e;
            continue;
          }
          let salt = salts.known(site.id, day);
          if (salt === undefined) {
            try {
              salt = await salts.of(site.id, day);
            } catch (e) {
              if (e instanceof SiteGone) continue;
              throw e;
            }
          }
          // Within a visit's reach of midnight, the hash under yesterday's salt too, so a visit under way continues (reference B2).
          let previous: SaltKey | null | Promise<SaltKey | null> = null;
          if (at.getTime() % DAY_MS < SESSION_GAP_MS) {
            previous = salts.existing(site.id, utcDay(new Date(at.getTime() - DAY_MS)));
            if (previous instanceof Promise) previous = await previous;
          }
          rows.push(rowFor(ev, site, at, salt, previous, ip, ua!, agent, country));
        }
        // Committed to the buffer, which wakes this process's drain (onAppend).
        if (rows.length > 0) await buffer.append(rows);
        accepted(res, ev.domains.length - rows.length);
      } catch (e) {
        if (res.headersSent) return;
        if (e instanceof EventError) return refused(res, 400, e.field, e.message);
        drainUnread(req);
        if (e instanceof ApiError && e.status < 500) return refused(res, e.status, 'request', e.message);
        // Never a 500: what failed is on our side (the database, most likely), and the tracker may retry.
        log.error('accepting an analytics event', e);
        refused(res, 503, 'request', 'The event could not be recorded now; retry later.', { 'Retry-After': '5' });
      }
    },
    preflight(res) {
      res.writeHead(204, PREFLIGHT_HEADERS);
      res.end();
    },
    flush: () => buffer.flush(),
  };
}

export interface AnalyticsIngestDeps { db: Db; log: Logger; limits: RateLimits }

/** Mounts `POST /api/event` (and its CORS preflight) on `app` (requests the fast path leaves to the app); returns what shutdown must flush. */
export function mountAnalyticsIngestion(app: express.Express, deps: AnalyticsIngestDeps): { flush(): Promise<void> } {
  const ingestion = eventIngestionFor(deps.db, deps.log, deps.limits);
  app.options(EVENT_PATH, (_req, res) => ingestion.preflight(res));
  app.post(EVENT_PATH, (req, res) => void ingestion.accept(req, res, req.ip ?? req.socket.remoteAddress ?? ''));
  return { flush: () => ingestion.flush() };
}

/** The event path as the tracker sends it (any other spelling is left to the app's router). */
const FAST_PATH = /^\/api\/event\/?(?:\?.*)?$/;

/**
 * The client address as Express's `req.ip` makes it (proxy-addr): walking
 * from the socket's peer out through `X-Forwarded-For` (right to left) while
 * `trust` (the app's compiled TRUST_PROXY) trusts the hop.
 */
export function clientAddress(req: IncomingMessage, trust: (addr: string, i: number) => boolean): string {
  const peer = req.socket.remoteAddress ?? '';
  const xff = req.headers['x-forwarded-for'];
  if (!xff || !trust(peer, 0)) return peer;
  const hops = [peer, ...String(xff).split(',').map((a) => a.trim()).reverse()];
  for (let i = 0; i < hops.length - 1; i++) if (!trust(hops[i], i)) return hops[i];
  return hops[hops.length - 1];
}

export interface EventFastPathDeps { db: Db; logger: Logger; limits: RateLimits; closing: () => boolean; baseUrl: () => string }

/**
 * The server's request listener: `next`, except that events posted to
 * Vigil's own host (or an address, or localhost) are answered without
 * Express, as pings are (src/transport/ping.ts: the router and Express's
 * per-request prototype change cost more than the event). The answer is the
 * same as through the app's route; `requestObserver` runs (request id, the
 * log line, the metrics, `Connection: close` once shutdown began), and the
 * client address is `req.ip`'s, from the app's own TRUST_PROXY.
 */
export function withEventFastPath(next: Listener, app: express.Express, deps: EventFastPathDeps): Listener {
  const ingestion = eventIngestionFor(deps.db, deps.logger, deps.limits);
  const trust = app.get('trust proxy fn') as (addr: string, i: number) => boolean;
  const preflight: Listener = (_req, res) => ingestion.preflight(res);
  const accept: Listener = (req, res) => void ingestion.accept(req, res, clientAddress(req, trust));
  return withFastPath(next, deps, (req) => {
    const method = req.method;
    if ((method !== 'POST' && method !== 'OPTIONS') || !FAST_PATH.test(req.url ?? '')) return null;
    return method === 'OPTIONS' ? preflight : accept;
  });
}
