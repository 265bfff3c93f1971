/**
 * Sentry envelopes (reference A2): a JSON header line, then items — each a
 * JSON item header and a payload of exactly `length` bytes when the header
 * has one, else up to the next newline (JS SDKs omit `length` on JSON items
 * and send no trailing newline). Only `event` items are kept; every other
 * type (session, client_report, span, attachment, …) is accepted and
 * skipped. Anything that does not parse is a 400 with the reason.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../pipeline/errors';

/** One event item over this is refused (413), as Relay does. */
export const MAX_EVENT_BYTES = 1024 * 1024;

export interface Envelope {
  header: Record<string, unknown>;
  /** Each event parsed, and as the SDK sent it (stored as sent: `raw`, UTF-8 with invalid bytes replaced). */
  events: { eventId: string; payload: Record<string, unknown>; raw: string; bytes: Buffer }[];
  /** Items of other types, by type (accepted, not stored). */
  skipped: Record<string, number>;
}

export function malformed(reason: string): ApiError {
  return new ApiError(400, 'invalid_envelope', `The envelope could not be read: ${reason}.`, {}, [{ field: 'body', reason }], { 'X-Sentry-Error': reason });
}

function json(buf: Buffer | string, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(typeof buf === 'string' ? buf : buf.toString('utf8'));
  } catch {
    throw malformed(`${what} is not JSON`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw malformed(`${what} is not a JSON object`);
  return v as Record<string, unknown>;
}

/** An event id as Sentry writes it (32 lower-case hex), or a new one when it is missing or not one. */
export function eventIdOf(...candidates: unknown[]): string {
  for (const c of candidates) {
    if (typeof c !== 'string') continue;
    const hex = c.replace(/-/g, '').toLowerCase();
    if (/^[0-9a-f]{32}$/.test(hex)) return hex;
  }
  return randomUUID().replace(/-/g, '');
}

function tooLarge(): ApiError {
  return new ApiError(413, 'event_too_large', `An event is larger than ${MAX_EVENT_BYTES} bytes.`, { limit: String(MAX_EVENT_BYTES) }, [], { 'X-Sentry-Error': 'event too large' });
}

/** Parses an envelope body. */
export function parseEnvelope(body: Buffer): Envelope {
  let pos = body.indexOf(0x0a);
  const header = json(pos < 0 ? body : body.subarray(0, pos), 'the envelope header');
  pos = pos < 0 ? body.length : pos + 1;
  const events: Envelope['events'] = [];
  const skipped: Record<string, number> = {};
  while (pos < body.length) {
    // Blank lines between items are tolerated.
    if (body[pos] === 0x0a) { pos++; continue; }
    let end = body.indexOf(0x0a, pos);
    if (end < 0) end = body.length;
    const item = json(body.subarray(pos, end), 'an item header');
    pos = end + 1;
    const type = typeof item.type === 'string' ? item.type : '';
    if (!type) throw malformed('an item has no type');
    let payload: Buffer;
    if (item.length !== undefined) {
      const length = Number(item.length);
      if (!Number.isInteger(length) || length < 0) throw malformed('an item length is not a whole number');
      if (pos + length > body.length) throw malformed('an item is shorter than its length');
      payload = body.subarray(pos, pos + length);
      pos += length;
      if (body[pos] === 0x0a) pos++;
    } else {
      let stop = body.indexOf(0x0a, pos);
      if (stop < 0) stop = body.length;
      payload = body.subarray(pos, stop);
      pos = stop + 1;
    }
    if (type === 'event') {
      if (payload.length > MAX_EVENT_BYTES) throw tooLarge();
      // Decoded once: parsed from, and stored as, the same text.
      const raw = payload.toString('utf8');
      const event = json(raw, 'an event');
      events.push({ eventId: eventIdOf(event.event_id, header.event_id), payload: event, raw, bytes: payload });
    } else {
      skipped[type] = (skipped[type] ?? 0) + 1;
    }
  }
  return { header, events, skipped };
}

/** Parses the legacy `/store/` body: one event as JSON. */
export function parseStore(body: Buffer): Envelope {
  if (body.length > MAX_EVENT_BYTES) throw tooLarge();
  const raw = body.toString('utf8');
  const event = json(raw, 'the event');
  return { header: {}, events: [{ eventId: eventIdOf(event.event_id), payload: event, raw, bytes: body }], skipped: {} };
}
