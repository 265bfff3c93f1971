import type { RouteDef } from '../../gen/routes';
import { authenticate } from '../auth/authenticate';
import { sessionFromCookie } from '../auth/sessions';
import { ANONYMOUS } from '../auth/caller';
import { can, type Caller } from '../auth/caller';
import type { Permission } from '../auth/roles';
import { withTransactionRetries, type Db } from '../db/connect';
import { ApiError, forbidden } from './errors';
import type { Ctx, Services } from './context';
import type { RateLimits } from './ratelimit';
import { check } from './validate';
import { badInput, textProblem } from './text';
import { bodyValidators, queryValidators } from '../../gen/validators.cjs';
import { NOT_BUILT, notImplementedError } from '../api/notImplemented';

/**
 * What a request carries to prove who sends it, and where it comes from:
 * the `Authorization` header, else the session cookie (then a write must
 * come from Vigil's own origin), and the client's address and agent.
 */
export interface Credentials {
  authorization?: string;
  cookie?: string;
  origin?: string;
  referer?: string;
  host?: string;
  method: string;
  remoteAddress?: string;
  userAgent?: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** 403 `csrf_refused` unless a cookie-authenticated write names Vigil's own origin. */
function checkOrigin(c: Credentials, baseUrl: string): void {
  if (SAFE_METHODS.has(c.method.toUpperCase())) return;
  let from: string | null = null;
  try { from = new URL(c.origin && c.origin !== 'null' ? c.origin : c.referer ?? '').host.toLowerCase(); } catch { /* none */ }
  const own = new Set([c.host?.toLowerCase()]);
  try { own.add(new URL(baseUrl).host.toLowerCase()); } catch { /* unset */ }
  if (!from || !own.has(from)) {
    throw new ApiError(403, 'csrf_refused', 'A write signed in by cookie must come from this site (Origin or Referer of its own host); send the session as a bearer token otherwise.');
  }
}

/** A request as every transport hands it over: strings from the URL, a decoded body. */
export interface RawRequest {
  credentials: Credentials;
  path: Record<string, string>;
  query: Record<string, unknown>;
  /** The JSON-shaped body (undefined when none was sent), or raw bytes for raw-request operations. */
  body: unknown;
  /** Extra inputs some transports carry (headers of raw uploads). */
  headers?: Record<string, string | undefined>;
  /** Why the body could not be decoded (not JSON, not the message): answered after auth and permission, like any bad input. */
  bodyError?: ApiError;
}

/** A handler as the runner sees it: one per operation, typed in src/api. */
export type AnyHandler = (input: { path: any; query: any; body: any; headers?: Record<string, string | undefined> }, ctx: Ctx) => Promise<unknown>;

export interface RunnerDeps {
  db: Db;
  limits: RateLimits;
  services: Services;
  handlers: Record<string, AnyHandler>;
}

/**
 * Runs operations through the pipeline. A transport admits the request from
 * its headers first (the cheap refusals: no or unknown key, rate limit,
 * session-only, permission, not built), reads the body only then, and
 * executes: validation and the handler.
 */
export interface Runner {
  /** Authentication, the rate limit, session-only, the permission and not-built checks; throws the refusal. */
  admit(route: RouteDef, credentials: Credentials): Promise<Caller>;
  /** Validation and the handler, for a caller `admit` let in. */
  execute(route: RouteDef, raw: RawRequest, caller: Caller): Promise<unknown>;
  /** `admit` then `execute`: for transports that hold the whole request already. */
  run(route: RouteDef, raw: RawRequest): Promise<unknown>;
}

/**
 * Input PostgreSQL cannot take as text: a path id with it names no record
 * (404); a query or body value with it, or a body nested absurdly deep, is
 * refused (400) before any query could fail on it.
 */
function refuseUnstorable(raw: RawRequest): void {
  for (const [name, value] of Object.entries(raw.path)) {
    if (textProblem(value)) throw new ApiError(404, 'not_found', 'No such record.', {}, [{ field: name, reason: 'not found' }]);
  }
  const bad = badInput(raw.query) ?? badInput(raw.body);
  if (bad) throw new ApiError(400, 'invalid_field', `Invalid field ${bad.field}: ${bad.reason}.`, { field: bad.field }, [bad]);
}

/** Builds the runner every transport (REST JSON, REST protobuf, Connect, MCP) calls. */
export function createRunner(deps: RunnerDeps): Runner {
  const admit: Runner['admit'] = async (route, credentials) => {
    if (route.anonymous) {
      // No credential (sign-in, password reset): limited by client address; the handler limits per account too.
      await deps.limits.consume(`address:${credentials.remoteAddress ?? ''}`, route.bucket);
      if ((deps.handlers[route.operationId] as { [NOT_BUILT]?: boolean })[NOT_BUILT]) throw notImplementedError(route.operationId);
      return ANONYMOUS;
    }
    let authorization = credentials.authorization;
    const cookieToken = authorization ? null : sessionFromCookie(credentials.cookie);
    if (cookieToken) authorization = `Bearer ${cookieToken}`;
    const caller = await authenticate(deps.db, authorization);
    if (cookieToken) checkOrigin(credentials, deps.services.baseUrl());
    await deps.limits.consume(caller.organizationId, route.bucket);
    if (route.sessionOnly && caller.kind === 'key') {
      throw new ApiError(403, 'session_required', 'This operation needs a signed-in session; API keys cannot use it.');
    }
    if (route.permission && !can(caller, route.permission as Permission)) throw forbidden(route.permission);
    // An operation not built yet says so whatever the input.
    if ((deps.handlers[route.operationId] as { [NOT_BUILT]?: boolean })[NOT_BUILT]) throw notImplementedError(route.operationId);
    return caller;
  };
  const execute: Runner['execute'] = async (route, raw, caller) => {
    if (raw.bodyError) throw raw.bodyError;
    refuseUnstorable(raw);
    const query = { ...raw.query };
    check(queryValidators[route.operationId], query, 'query');
    let body = raw.body;
    if (route.body === 'required' && body === undefined && !route.rawRequest) body = {};
    if (body !== undefined && !route.rawRequest) check(bodyValidators[route.operationId], body, 'body');

    const ctx: Ctx = {
      caller,
      // Its transactions run again after a deadlock or a serialisation failure (src/db/retry.ts).
      db: withTransactionRetries(deps.db),
      services: deps.services,
      now: new Date(),
      limits: deps.limits,
      client: { address: raw.credentials.remoteAddress ?? null, userAgent: raw.credentials.userAgent?.slice(0, 200) ?? null, host: raw.credentials.host ?? null },
      require: (p) => { if (!can(caller, p)) throw forbidden(p); },
    };
    return deps.handlers[route.operationId]({ path: raw.path, query, body, headers: raw.headers }, ctx);
  };
  return { admit, execute, run: async (route, raw) => execute(route, raw, await admit(route, raw.credentials)) };
}
