import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';
import { retryAfterSeconds, toApiError, VigilApiError } from './errors.js';
import { RateLimitState } from './rateLimit.js';

/** How to reach and authenticate to a Vigil server. */
export interface VigilClientOptions {
  /** The server's base URL (`https://vigil.example.com`); '' for the page's own origin in a browser. */
  baseUrl: string;
  /** An API key (`vk_…`) or a session token (`vs_…`), sent as `Authorization: Bearer`. Without one the browser's session cookie is sent. */
  token?: string;
  /** Retries of a GET answered 429, each after its `Retry-After` (default 2; 0 turns them off). Writes are never retried. */
  maxReadRetries?: number;
  /** A GET whose `Retry-After` exceeds this many seconds is not retried but fails at once (default 60). */
  maxRetryWaitSeconds?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

/** The client: openapi-fetch typed by the contract, plus the rate-limit state. */
export interface VigilClient {
  /** openapi-fetch's client: `api.GET('/monitors')` → `{ data, error, response }`. */
  api: Client<paths>;
  /** When the organisation's limit lets calls through again (observable). */
  rateLimit: RateLimitState;
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); reject(signal!.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Creates a client of Vigil's REST API v1. */
export function createVigilClient(options: VigilClientOptions): VigilClient {
  const rateLimit = new RateLimitState();
  const baseFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const maxRetries = options.maxReadRetries ?? 2;
  const maxWait = options.maxRetryWaitSeconds ?? 60;

  // Every call passes here: a 429 records "limited until" and, for a read, waits Retry-After and tries again.
  const fetchWithRetry = async (input: Request): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await baseFetch(input.clone());
      } catch (e) {
        if (input.signal?.aborted) throw e;
        throw new VigilApiError(0, null);
      }
      if (res.status !== 429) {
        if (res.ok) rateLimit.clear();
        return res;
      }
      const wait = retryAfterSeconds(res.headers.get('retry-after')) ?? 1;
      let bucket: string | null = null;
      try { bucket = ((await res.clone().json()) as { vars?: { bucket?: string } }).vars?.bucket ?? null; } catch { /* not JSON */ }
      rateLimit.limited(wait, bucket);
      if (input.method !== 'GET' || attempt >= maxRetries || wait > maxWait) return res;
      await sleep(wait * 1000 + 50, input.signal);
    }
  };

  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  const api = createClient<paths>({
    baseUrl: `${options.baseUrl.replace(/\/+$/, '')}/api/v1`,
    headers,
    // Without a token the session cookie authenticates (same origin, or a server that allows it).
    credentials: options.token ? 'omit' : 'include',
    fetch: fetchWithRetry,
  });
  return { api, rateLimit };
}

/** What openapi-fetch resolves a call to. */
interface FetchResult<T> { data?: T; error?: unknown; response: Response }

/**
 * The data of a call, or a thrown `VigilApiError` for any non-2xx answer:
 * `const { data } = await ok(vigil.api.GET('/monitors'))`.
 */
export async function ok<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const r = await call;
  if (!r.response.ok || r.data === undefined) throw toApiError(r.response, r.error);
  return r.data;
}
