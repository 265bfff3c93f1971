/**
 * Sentry-compatible ingestion, outside `/api/v1` at Sentry's own paths:
 * `POST {base_url}/api/<ref>/envelope/` and the legacy `/store/`. The key
 * comes from `X-Sentry-Auth`, the `sentry_key` query or the envelope header
 * `dsn` (reference A1); the body may come without a content type, chunked,
 * gzip/deflate/br/zstd (`UTF-8`, as old sentry-java says, ignored). CORS is Relay's, so browser SDKs post from any origin
 * without a preflight and can read the rate-limit headers. Bodies are parsed
 * on a thread of their own (parsePool.ts), which also makes each event's
 * summary for grouping. An event is acknowledged (`200 {"id"}`) only once it
 * is committed (group commit: many requests share one INSERT); grouping runs
 * behind it (grouper.ts). Requests to Vigil's own host skip Express
 * (withErrorFastPath); the app's routes answer the rest the same way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import express, { type Request, type Response } from 'express';
import { CompiledQuery } from 'kysely';
import { cachedRows, type Db } from '../db/connect';
import { groupCommit } from '../db/groupCommit';
import type { Logger } from '../log';
import { ApiError } from '../pipeline/errors';
import type { RateLimits } from '../pipeline/ratelimit';
import { drainUnread, readBody } from '../transport/body';
import { withFastPath, type Listener } from '../transport/fastPath';
import { parsePool } from './parsePool';

/** A whole envelope, decompressed, over this is refused (413). */
export const MAX_ENVELOPE_BYTES = 20 * 1024 * 1024;

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST',
  'Access-Control-Allow-Headers': 'x-sentry-auth, x-requested-with, x-forwarded-for, origin, referer, accept, content-type, authentication, authorization, content-encoding, transfer-encoding',
  'Access-Control-Expose-Headers': 'x-sentry-error, x-sentry-rate-limits, retry-after',
  'Access-Control-Max-Age': '3600',
};

interface Project { id: string; organizationId: string; publicKey: string }

/** The `sentry_key` of an `X-Sentry-Auth` header. */
function keyFromAuthHeader(h: string | undefined): string | null {
  return /(?:^|[\s,])sentry_key\s*=\s*([^,\s]+)/i.exec(h ?? '')?.[1] ?? null;
}

/** The public key of a DSN (its user part). */
function keyFromDsn(dsn: unknown): string | null {
  if (typeof dsn !== 'string') return null;
  try { return decodeURIComponent(new URL(dsn).username) || null; } catch { return null; }
}

/**
 * Answers on Node's own response (Express's `res.json` costs an ETag and its
 * header checks on every event: a tenth of an event's CPU in bench:errors);
 * headers set before (the request id) are kept.
 */
function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...CORS, 'Cache-Control': 'no-store', 'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)), ...headers,
  });
  res.end(text);
}

export interface IngestDeps { db: Db; limits: RateLimits; log: Logger }

/** What ingestion stores of an event: the payload as sent, and what grouping reads of it (grouper.ts). */
interface StoredEvent { project_id: string; organization_id: string; event_id: string; payload: Buffer; summary: string | null }

/** Error-event ingestion of one database handle: the Express routes and the server's fast path share its batches and caches. */
export interface ErrorIngestion {
  /** Answers one envelope (or legacy store) request for project `ref`; `queryKey` is the `sentry_key` query. Never throws. */
  accept(req: IncomingMessage, res: ServerResponse, kind: 'envelope' | 'store', ref: string, queryKey: string | null): Promise<void>;
  /** Answers the CORS preflight. */
  preflight(res: ServerResponse): void;
  /** Writes what is pending (shutdown). */
  flush(): Promise<void>;
}

const ingestions = new WeakMap<Db, ErrorIngestion>();

/** The error ingestion of `db` (one per database handle). */
export function errorIngestionFor(deps: IngestDeps): ErrorIngestion {
  let i = ingestions.get(deps.db);
  if (!i) ingestions.set(deps.db, (i = errorIngestion(deps)));
  return i;
}

/** `insert … values ($1, …), …` for `n` events, made once per batch size. */
const insertTexts = new Map<number, string>();
function insertText(n: number): string {
  let text = insertTexts.get(n);
  if (text === undefined) {
    const rows = Array.from({ length: n }, (_, i) => `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, $${i * 5 + 5})`);
    text = `insert into error_events (project_id, organization_id, event_id, payload, summary) values ${rows.join(', ')}`;
    if (insertTexts.size < 1000) insertTexts.set(n, text);
  }
  return text;
}

function errorIngestion(deps: IngestDeps): ErrorIngestion {
  // From the read cache, valid until error_projects changes in any process: a deleted project's DSN stops at once.
  const projectByRef = async (ref: string): Promise<Project | null> => {
    const [row] = await cachedRows(deps.db, `error_project:${ref}`, ['error_projects'],
      () => deps.db.selectFrom('error_projects').select(['id', 'organization_id', 'public_key']).where('ref', '=', ref).execute());
    return row ? { id: row.id, organizationId: row.organization_id, publicKey: row.public_key } : null;
  };
  const parser = parsePool(deps.log);
  const events = groupCommit<StoredEvent>({
    // The statement text by hand: kysely's building and compiling of five parameters per event cost more than the insert's own work here.
    write: async (rows) => {
      // The payload goes as bytes (valid UTF-8, checked on the parser thread): PostgreSQL takes them as text without a decode here.
      const params: (string | Buffer | null)[] = [];
      for (const r of rows) params.push(r.project_id, r.organization_id, r.event_id, r.payload, r.summary);
      await deps.db.executeQuery(CompiledQuery.raw(insertText(rows.length), params));
    },
    // Acknowledgements need no order between requests: several batches may commit at once.
    concurrency: 3,
  });

  /** Spends the project's and the organisation's points; the 429 carries what the SDKs back off on. */
  const admitEvents = async (p: Project, n: number) => {
    for (const [key, bucket, scope, reason] of [[`project:${p.id}`, 'sentry_project', 'project', 'project_rate_limited'], [`org:${p.organizationId}`, 'sentry_org', 'organization', 'quota_exceeded']] as const) {
      try {
        await deps.limits.consume(key, bucket, n);
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 429) throw e;
        const retry = e.headers['Retry-After'] ?? '60';
        throw new ApiError(429, 'rate_limited', `Too many events for this ${scope}; retry in ${retry} seconds.`, { retryAfter: retry }, [],
          { 'Retry-After': retry, 'X-Sentry-Rate-Limits': `${retry}:error;default;security:${scope}:${reason}` });
      }
    }
  };

  return {
    async accept(req, res, kind, ref, queryKey) {
      try {
        if (!/^\d{1,18}$/.test(ref)) throw new ApiError(404, 'not_found', 'No such project.');
        const project = await projectByRef(ref);
        // The key may only be in the envelope header: read the body first when the request names none.
        const given = keyFromAuthHeader(req.headers['x-sentry-auth'] as string | undefined) ?? queryKey;
        if (given !== null && (!project || given !== project.publicKey)) throw forbidden();
        const body = await readBody(req, MAX_ENVELOPE_BYTES);
        const envelope = await parser.parse(kind, body);
        const headerKey = keyFromDsn(envelope.dsn);
        if (!project || (given === null && headerKey !== project.publicKey) || (given !== null && headerKey !== null && headerKey !== given)) throw forbidden();
        if (envelope.events.length > 0) {
          await admitEvents(project, envelope.events.length);
          await events.add(envelope.events.map((e) => ({
            project_id: project.id, organization_id: project.organizationId, event_id: e.eventId,
            payload: Buffer.from(e.raw.buffer, e.raw.byteOffset, e.raw.byteLength), summary: e.summary,
          })));
        }
        send(res, 200, envelope.events[0] ? { id: envelope.events[0].eventId } : {});
      } catch (e) {
        if (res.headersSent) return;
        drainUnread(req);
        if (e instanceof ApiError) {
          return send(res, e.status, { detail: e.message, code: e.code }, { ...e.headers, ...(e.headers['X-Sentry-Error'] ? {} : { 'X-Sentry-Error': e.message }) });
        }
        // Never a 500: what failed is on our side (the database, most likely). The SDKs drop an event on a 5xx (only 429 makes them wait and send later), so this is for failures, never for load.
        deps.log.error('accepting an error event', e);
        send(res, 503, { detail: 'The event could not be recorded now; retry later.', code: 'unavailable' }, { 'Retry-After': '5', 'X-Sentry-Error': 'unavailable' });
      }
    },
    preflight(res) {
      res.writeHead(200, PREFLIGHT_HEADERS);
      res.end();
    },
    flush: () => events.flush(),
  };
}

const PREFLIGHT_HEADERS = Object.entries(CORS).flat();

/** Mounts the ingestion routes on `app` (requests the fast path leaves to it: other spellings, other hosts); returns what shutdown must flush. */
export function mountErrorIngestion(app: express.Express, deps: IngestDeps): { flush(): Promise<void> } {
  const ingestion = errorIngestionFor(deps);
  const router = express.Router({ strict: false });
  router.options(['/api/:ref/envelope', '/api/:ref/store'], (_req, res) => ingestion.preflight(res));
  const handle = (kind: 'envelope' | 'store') => (req: Request, res: Response) =>
    void ingestion.accept(req, res, kind, String(req.params.ref), typeof req.query.sentry_key === 'string' ? req.query.sentry_key : null);
  router.post('/api/:ref/envelope', handle('envelope'));
  router.post('/api/:ref/store', handle('store'));
  app.use(router);
  return { flush: () => ingestion.flush() };
}

/** The ingestion paths as the SDKs send them (any other spelling is left to the app's router). */
const FAST_PATH = /^\/api\/([^/?]+)\/(envelope|store)\/?(?:\?(.*))?$/;

export interface ErrorFastPathDeps { db: Db; limits: RateLimits; logger: Logger; closing: () => boolean; baseUrl: () => string }

/**
 * The server's request listener: `next`, except that envelopes posted to
 * Vigil's own host (or an address, or localhost) are answered without
 * Express, as pings and analytics events are (src/transport/ping.ts):
 * Express's router and its per-request prototype change cost a tenth of an
 * event's CPU. The answer is the same as through the app's routes, and
 * `requestObserver` runs (request id, the log line, the metrics).
 */
export function withErrorFastPath(next: Listener, deps: ErrorFastPathDeps): Listener {
  const ingestion = errorIngestionFor({ db: deps.db, limits: deps.limits, log: deps.logger });
  const preflight: Listener = (_req, res) => ingestion.preflight(res);
  return withFastPath(next, deps, (req) => {
    const method = req.method;
    const m = method === 'POST' || method === 'OPTIONS' ? FAST_PATH.exec(req.url ?? '') : null;
    // A project number as the app's route reads it (percent-decoded); anything but digits is left to the app (e.g. `/api/v1/…`).
    const ref = m ? decodedRef(m[1]) : null;
    if (!m || ref === null) return null;
    return method === 'OPTIONS' ? preflight : (rq, rs) => void ingestion.accept(rq, rs, m[2] as 'envelope' | 'store', ref, queryKey(m[3]));
  });
}

function decodedRef(raw: string): string | null {
  let ref = raw;
  if (raw.includes('%')) {
    try { ref = decodeURIComponent(raw); } catch { return null; }
  }
  return /^\d{1,18}$/.test(ref) ? ref : null;
}

/** `sentry_key` of a query string, parsed as the app's (Express's "simple" parser: node:querystring); only a single value counts. */
function queryKey(query: string | undefined): string | null {
  if (!query) return null;
  const v = querystring.parse(query).sentry_key;
  return typeof v === 'string' ? v : null;
}

function forbidden(): ApiError {
  return new ApiError(403, 'unknown_key', 'Unknown DSN key for this project.', {}, [], { 'X-Sentry-Error': 'invalid DSN key' });
}
