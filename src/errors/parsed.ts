/**
 * An ingestion request's body parsed into what the main thread stores: each
 * event's id, its summary for grouping (grouping.ts) and its bytes, or the
 * refusal. Pure, and made of plain data, so it runs on the parser's thread
 * (parseWorker.ts) or inline (parsePool.ts) alike.
 */
import { isUtf8 } from 'node:buffer';
import { ApiError } from '../pipeline/errors';
import { parseEnvelope, parseStore } from './envelope';
import { summarise } from './grouping';

export interface ParseRequest { id: number; kind: 'envelope' | 'store'; body: Uint8Array }

export interface ParsedEvent {
  eventId: string;
  /** EventSummary as JSON; null when it could not be made (the grouper then groups from the payload, or sets the event aside). */
  summary: string | null;
  /** The payload: valid UTF-8 JSON text (the bytes as sent, or with invalid sequences replaced). */
  raw: Uint8Array;
}

/** An ApiError as plain data (it crosses threads). */
export interface Refusal { status: number; code: string; message: string; vars: Record<string, string>; fields: ApiError['fields']; headers: Record<string, string> }

export interface ParseResult { id: number; dsn?: string | null; events?: ParsedEvent[]; error?: Refusal }

/** A copy of `b` in an ArrayBuffer of its own (transferable). */
function own(b: Uint8Array): Uint8Array {
  const u = new Uint8Array(b.length);
  u.set(b);
  return u;
}

/** One event's summary: a payload that defeats it (say, nesting too deep) costs that event its summary, not its envelope its acceptance. */
function summaryOf(payload: Record<string, unknown>): string | null {
  try {
    return JSON.stringify(summarise(payload));
  } catch {
    return null;
  }
}

export function parseRequest(r: ParseRequest): ParseResult {
  try {
    const body = Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength);
    const envelope = r.kind === 'envelope' ? parseEnvelope(body) : parseStore(body);
    return {
      id: r.id,
      dsn: typeof envelope.header.dsn === 'string' ? envelope.header.dsn : null,
      events: envelope.events.map((e) => ({
        eventId: e.eventId,
        summary: summaryOf(e.payload),
        raw: isUtf8(e.bytes) ? own(e.bytes) : own(Buffer.from(e.raw, 'utf8')),
      })),
    };
  } catch (e) {
    if (e instanceof ApiError) return { id: r.id, error: { status: e.status, code: e.code, message: e.message, vars: e.vars, fields: e.fields, headers: e.headers } };
    // Anything else thrown by a body (none is known) refuses that body alone, never its neighbours on the thread.
    const reason = String((e as Error)?.message ?? e).slice(0, 200);
    return { id: r.id, error: { status: 400, code: 'invalid_envelope', message: `The envelope could not be read: ${reason}.`, vars: {}, fields: [{ field: 'body', reason }], headers: { 'X-Sentry-Error': reason } } };
  }
}

export function refusalError(r: Refusal): ApiError {
  return new ApiError(r.status, r.code, r.message, r.vars, r.fields, r.headers);
}
