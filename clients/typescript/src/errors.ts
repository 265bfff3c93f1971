import type { components } from './schema.js';

/** The body of every non-2xx answer of the API (the contract's `Error`). */
export type ApiErrorBody = components['schemas']['Error'];
/** One field at fault, as `details.fields` lists them. */
export type FieldProblem = components['schemas']['FieldProblem'];

/**
 * A failed call: the HTTP status and the contract's error shape. Branch on
 * `code` (stable); `message` is an English sentence that may be reworded.
 * A failure that never reached Vigil (the network, a proxy's HTML page) has
 * code `network_error` or `http_<status>`.
 */
export class VigilApiError extends Error {
  override readonly name = 'VigilApiError';
  readonly status: number;
  readonly code: string;
  readonly vars: Record<string, string>;
  readonly details: ApiErrorBody['details'];
  /** Seconds to wait, from `Retry-After` (429 and 503); null when absent. */
  readonly retryAfterSeconds: number | null;

  constructor(status: number, body: Partial<ApiErrorBody> | null, retryAfterSeconds: number | null = null) {
    super(body?.error ?? (status ? `HTTP ${status}` : 'The server could not be reached.'));
    this.status = status;
    this.code = body?.code ?? (status ? `http_${status}` : 'network_error');
    this.vars = body?.vars ?? {};
    this.details = body?.details ?? null;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** The reason given for `field` (a dotted path such as `config.url`), or null. */
  fieldReason(field: string): string | null {
    const d = this.details;
    if (!d) return null;
    return d.fields.find((f) => f.field === field)?.reason ?? (d.field === field ? d.reason : null);
  }
}

/** Seconds of a `Retry-After` header (whole seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

function isErrorBody(x: unknown): x is ApiErrorBody {
  return typeof x === 'object' && x !== null && typeof (x as ApiErrorBody).code === 'string';
}

/** The error of a failed response and its parsed body (openapi-fetch's `error`). */
export function toApiError(response: Response, body: unknown): VigilApiError {
  return new VigilApiError(response.status, isErrorBody(body) ? body : null, retryAfterSeconds(response.headers.get('retry-after')));
}
