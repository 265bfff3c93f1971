/**
 * Grouping as Sentry does (reference A4): a custom `fingerprint` first (its
 * `{{ default }}` standing for the default grouping); else the in-app frames
 * of every exception of the chain (only in-app ones when any frame is in-app;
 * per frame its module or normalised filename, function and, for JS/Node,
 * normalised context line); else each exception's type and value; else the
 * message with its parameters stripped. Synthetic exceptions (captureMessage)
 * contribute no type. Also the issue's title, culprit, type, value and level.
 */
import { createHash } from 'node:crypto';

type Obj = Record<string, any>;

export interface Grouped {
  fingerprint: string;
  title: string;
  type: string | null;
  value: string | null;
  culprit: string | null;
  level: 'fatal' | 'error' | 'warning' | 'info' | 'debug';
}

const LEVELS = new Set(['fatal', 'error', 'warning', 'info', 'debug']);

/** The chain as sent: causes first, the thrown error last. */
export function exceptionsOf(e: Obj): Obj[] {
  const v = e.exception?.values ?? (Array.isArray(e.exception) ? e.exception : null);
  return Array.isArray(v) ? v.filter((x) => x && typeof x === 'object') : [];
}

export function framesOf(x: Obj): Obj[] {
  const f = x.stacktrace?.frames;
  return Array.isArray(f) ? f.filter((y) => y && typeof y === 'object') : [];
}

/** A filename without scheme, host, query, fragment or cache-busting hashes, for grouping. */
function normalFilename(f: unknown): string {
  if (typeof f !== 'string') return '';
  return f.replace(/^[a-z][\w+.-]*:\/\/[^/]*/i, '').replace(/[?#].*$/, '').replace(/\b[0-9a-f]{8,}\b/gi, '<hash>');
}

/** Numbers, hex, UUIDs and quoted strings taken out of a message (so "user 42" and "user 43" group). */
export function stripParameters(s: string): string {
  return s
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
    .replace(/\b0x[0-9a-f]+\b/gi, '<hex>')
    .replace(/\b\d+(\.\d+)?\b/g, '<int>')
    .replace(/(["'`])(?:(?!\1).){1,200}\1/g, '<str>');
}

const firstLine = (s: unknown) => (typeof s === 'string' ? s.split('\n')[0].slice(0, 200) : '');

function messageOf(e: Obj): string {
  const m = e.logentry?.formatted ?? e.logentry?.message ?? e.message?.formatted ?? e.message;
  return typeof m === 'string' ? m : '';
}

function defaultComponents(e: Obj): unknown[] {
  const chain = exceptionsOf(e);
  const withFrames = chain.filter((x) => framesOf(x).length > 0);
  if (withFrames.length > 0) {
    const anyInApp = withFrames.some((x) => framesOf(x).some((f) => f.in_app === true));
    const js = ['javascript', 'node'].includes(String(e.platform ?? ''));
    return withFrames.map((x) => [
      x.mechanism?.synthetic ? null : x.type ?? null,
      framesOf(x).filter((f) => !anyInApp || f.in_app === true).map((f) => [
        f.module || normalFilename(f.filename ?? f.abs_path), f.function ?? null, js && typeof f.context_line === 'string' ? f.context_line.trim().slice(0, 200) : null,
      ]),
    ]);
  }
  if (chain.length > 0) return chain.map((x) => [x.mechanism?.synthetic ? null : x.type ?? null, x.value ?? null]);
  return ['message', stripParameters(messageOf(e))];
}

function culpritOf(e: Obj): string | null {
  if (typeof e.culprit === 'string' && e.culprit) return e.culprit;
  if (typeof e.transaction === 'string' && e.transaction) return e.transaction;
  const thrown = exceptionsOf(e).at(-1);
  const frames = thrown ? framesOf(thrown) : [];
  const frame = [...frames].reverse().find((f) => f.in_app === true) ?? frames.at(-1);
  if (!frame) return null;
  const where = frame.module || frame.filename || frame.abs_path;
  return frame.function ? `${frame.function}${where ? ` (${where})` : ''}` : where ?? null;
}

/** The issue an event belongs to, and how the issue reads. */
export function groupEvent(e: Obj): Grouped {
  const custom = Array.isArray(e.fingerprint) ? e.fingerprint.filter((x: unknown) => typeof x === 'string') : [];
  const components = custom.length ? custom.map((x: string) => (x === '{{ default }}' || x === '{{default}}' ? defaultComponents(e) : x)) : defaultComponents(e);
  const fingerprint = createHash('sha1').update(JSON.stringify(components)).digest('hex');
  const thrown = exceptionsOf(e).at(-1);
  const synthetic = thrown?.mechanism?.synthetic === true;
  const type = thrown && !synthetic && typeof thrown.type === 'string' ? thrown.type : null;
  const value = thrown && typeof thrown.value === 'string' ? thrown.value : null;
  const message = messageOf(e);
  const title = (type ? `${type}: ${firstLine(value)}` : firstLine(message || value)) || '<unlabeled event>';
  const level = LEVELS.has(e.level) ? e.level : 'error';
  return { fingerprint, title: storable(title)!, type: storable(type), value: storable(value ?? (message || null), MAX_VALUE), culprit: storable(culpritOf(e)), level };
}

/** The longest issue value kept (an event may be 1 MiB; its issue's value need not). */
const MAX_VALUE = 10_000;

/**
 * A string as PostgreSQL text can hold it: without U+0000 (an event may
 * carry it as `\u0000`; one such field would fail the grouper's whole batch)
 * and at most `max` characters.
 */
function storable(s: string | null, max = 2_000): string | null {
  if (s === null) return null;
  const clean = s.includes('\u0000') ? s.replace(/\u0000/g, '') : s;
  return clean.length > max ? clean.slice(0, max) : clean;
}

/** A stable key for the user of an event (id, else email, username or address), or null. */
export function userKey(e: Obj): string | null {
  const u = e.user;
  if (!u || typeof u !== 'object') return null;
  const k = u.id ?? u.email ?? u.username ?? u.ip_address;
  return k === undefined || k === null ? null : storable(String(k), 200) || null;
}

/** A short string field of an event payload, or null. */
export function shortField(payload: Obj, key: string): string | null {
  const v = payload[key];
  return typeof v === 'string' && v ? storable(v, 200) || null : null;
}

/**
 * What the grouper reads of an event: made at ingestion from the payload it
 * parsed anyway and stored beside it (`error_events.summary`), so grouping
 * does not read whole payloads back.
 */
export interface EventSummary { g: Grouped; release: string | null; environment: string | null; user: string | null }

export function summarise(payload: Obj): EventSummary {
  return { g: groupEvent(payload), release: shortField(payload, 'release'), environment: shortField(payload, 'environment'), user: userKey(payload) };
}

/** A stored payload (JSON text, parsed once already at ingestion), as an object; `{}` if it is none. */
export function parsePayload(text: string | null | undefined): Obj {
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
