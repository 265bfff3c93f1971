/**
 * Sentry-compatible ingestion, outside `/api/v1` at Sentry's own paths:
 * `POST {base_url}/api/<ref>/envelope/` and the legacy `/store/`. The key
 * comes from `X-Sentry-Auth`, the `sentry_key` query or the envelope header
 * `dsn` (reference A1); the body may come without a content type, chunked,
 * gzip/deflate/br. CORS is Relay's, so browser SDKs post from any origin
 * without a preflight and can read the rate-limit headers. An event is
 * acknowledged (`200 {"id"}`) only once it is committed (group commit: many
 * requests share one INSERT); grouping runs behind it.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { cachedRows, type Db } from '../db/connect';
import { groupCommit } from '../db/groupCommit';
import { ApiError } from '../pipeline/errors';
import type { RateLimits } from '../pipeline/ratelimit';
import { drainUnread, readBody } from '../transport/body';
import { parseEnvelope, parseStore, type Envelope } from './envelope';

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
function send(res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...CORS, 'Cache-Control': 'no-store', 'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)), ...headers,
  });
  res.end(text);
}

export interface IngestDeps { db: Db; limits: RateLimits }

/** Mounts the ingestion routes on `app`; returns what shutdown must flush. */
export function mountErrorIngestion(app: express.Express, deps: IngestDeps): { flush(): Promise<void> } {
  // From the read cache, valid until error_projects changes in any process: a deleted project's DSN stops at once.
  const projectByRef = async (ref: string): Promise<Project | null> => {
    const [row] = await cachedRows(deps.db, `error_project:${ref}`, ['error_projects'],
      () => deps.db.selectFrom('error_projects').select(['id', 'organization_id', 'public_key']).where('ref', '=', ref).execute());
    return row ? { id: row.id, organizationId: row.organization_id, publicKey: row.public_key } : null;
  };
  const events = groupCommit<{ project_id: string; organization_id: string; event_id: string; payload: string }>({
    write: async (rows) => { await deps.db.insertInto('error_events').values(rows).execute(); },
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

  const handle = (kind: 'envelope' | 'store') => async (req: Request, res: Response, next: NextFunction) => {
    try {
      const ref = String(req.params.ref);
      if (!/^\d{1,18}$/.test(ref)) throw new ApiError(404, 'not_found', 'No such project.');
      const project = await projectByRef(ref);
      // The key may only be in the envelope header: read the body first when the request names none.
      const queryKey = typeof req.query.sentry_key === 'string' ? req.query.sentry_key : null;
      const given = keyFromAuthHeader(req.headers['x-sentry-auth'] as string | undefined) ?? queryKey;
      if (given !== null && (!project || given !== project.publicKey)) throw forbidden();
      const body = await readBody(req, MAX_ENVELOPE_BYTES);
      const envelope: Envelope = kind === 'envelope' ? parseEnvelope(body) : parseStore(body);
      const headerKey = keyFromDsn(envelope.header.dsn);
      if (!project || (given === null && headerKey !== project.publicKey) || (given !== null && headerKey !== null && headerKey !== given)) throw forbidden();
      if (envelope.events.length > 0) {
        await admitEvents(project, envelope.events.length);
        await events.add(envelope.events.map((e) => ({ project_id: project.id, organization_id: project.organizationId, event_id: e.eventId, payload: e.raw })));
      }
      send(res, 200, envelope.events[0] ? { id: envelope.events[0].eventId } : {});
    } catch (e) {
      if (!(e instanceof ApiError)) return next(e);
      drainUnread(req);
      send(res, e.status, { detail: e.message, code: e.code }, { ...e.headers, ...(e.headers['X-Sentry-Error'] ? {} : { 'X-Sentry-Error': e.message }) });
    }
  };

  const router = express.Router({ strict: false });
  router.options(['/api/:ref/envelope', '/api/:ref/store'], (_req, res) => { for (const [k, v] of Object.entries(CORS)) res.setHeader(k, v); res.status(200).end(); });
  router.post('/api/:ref/envelope', handle('envelope'));
  router.post('/api/:ref/store', handle('store'));
  app.use(router);
  return { flush: () => events.flush() };
}

function forbidden(): ApiError {
  return new ApiError(403, 'unknown_key', 'Unknown DSN key for this project.', {}, [], { 'X-Sentry-Error': 'invalid DSN key' });
}
