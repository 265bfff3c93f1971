/**
 * JavaScript source maps (reference A5): uploaded per project, matched by
 * the frame's debug id (`debug_meta.images` of type `sourcemap`, whose
 * `code_file` is the frame's `abs_path`) first, then by release and file
 * name (`~/path` standing for scheme and host). Frames are resolved when an
 * issue is read, so a map uploaded after the event still applies; a map that
 * cannot be used leaves the frame as the SDK sent it. A resolved frame is
 * named after the original function it is in (see `resolveFrames`), not
 * the minified name nor the map's token at the position.
 */
import zlib from 'node:zlib';
import { SourceMapConsumer, type NullableMappedPosition, type RawSourceMap } from 'source-map';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { audit } from '../domain/audit';
import { ApiError, invalid, notFound } from '../pipeline/errors';
import { exceptionsOf, framesOf } from './grouping';
import { enclosingFunctionName, functionScopes, type FunctionScope } from './sourceScopes';

/** A map over this, decoded, is refused (413). */
export const MAX_MAP_BYTES = 40 * 1024 * 1024;
const CONTEXT_LINES = 5;
/** Original sources longer than this are not scanned for function names (a few seconds per 10 MB): the caller's token names the frame. */
const MAX_SCOPE_SCAN_CHARS = 2_000_000;

/** POST /sourcemaps. */
export async function uploadSourceMap(db: Db, caller: Caller, body: { projectRef: number; filename: string; map?: Record<string, unknown>; mapGzipBase64?: string; debugId?: string; release?: string }) {
  if ((body.map === undefined) === (body.mapGzipBase64 === undefined)) throw invalid('map', 'send exactly one of map and mapGzipBase64');
  if (!body.debugId && !body.release) {
    throw new ApiError(400, 'sourcemap_unmatchable', 'A map with neither debugId nor release could never be matched to a frame.', {}, [{ field: 'debugId', reason: 'debugId or release is required' }]);
  }
  let text: string;
  if (body.map !== undefined) text = JSON.stringify(body.map);
  else {
    try {
      text = zlib.gunzipSync(Buffer.from(body.mapGzipBase64!, 'base64'), { maxOutputLength: MAX_MAP_BYTES + 1 }).toString('utf8');
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
      throw invalid('mapGzipBase64', 'is not base64 of gzip data');
    }
  }
  if (Buffer.byteLength(text) > MAX_MAP_BYTES) throw tooLarge();
  let map: Record<string, unknown>;
  try { map = JSON.parse(text); } catch { throw new ApiError(400, 'sourcemap_invalid', 'The map is not JSON.', {}, [{ field: 'map', reason: 'not JSON' }]); }
  if (map?.version !== 3 || typeof map.mappings !== 'string') {
    throw new ApiError(400, 'sourcemap_invalid', 'Not a version 3 source map (`version` and `mappings`).', {}, [{ field: 'map', reason: 'not a version 3 source map' }]);
  }
  let q = db.selectFrom('error_projects').select(['id', 'workspace_id', 'ref']).where('organization_id', '=', caller.organizationId).where('ref', '=', String(body.projectRef));
  if (caller.workspaceIds !== null) q = q.where('workspace_id', 'in', caller.workspaceIds.length ? [...caller.workspaceIds] : ['']);
  const project = await q.executeTakeFirst();
  if (!project) throw notFound('error project', 'projectRef');
  const debugId = body.debugId?.toLowerCase() ?? null;
  const release = debugId ? body.release ?? null : body.release!;
  const row = { id: newId('smp'), project_id: project.id, organization_id: caller.organizationId, filename: body.filename, debug_id: debugId, release, map_gzip: zlib.gzipSync(text), size_bytes: Buffer.byteLength(text) };
  await db.transaction().execute(async (tx) => {
    // Uploading again replaces: the same debug id, or (without one) the same release and file.
    let del = tx.deleteFrom('error_sourcemaps').where('project_id', '=', project.id);
    del = debugId ? del.where('debug_id', '=', debugId) : del.where('debug_id', 'is', null).where('release', '=', release).where('filename', '=', body.filename);
    await del.execute();
    await tx.insertInto('error_sourcemaps').values(row).execute();
    await audit(tx, caller, { action: 'sourcemap.uploaded', resourceType: 'error_project', resourceId: project.id, workspaceId: project.workspace_id,
      changes: { sourcemap: { from: null, to: { filename: body.filename, debugId, release, sizeBytes: row.size_bytes } } } });
  });
  return { id: row.id, projectRef: Number(project.ref), filename: row.filename, debugId, release, sizeBytes: row.size_bytes, createdAt: new Date().toISOString() };
}

function tooLarge(): ApiError {
  return new ApiError(413, 'sourcemap_too_large', `A source map may be at most ${MAX_MAP_BYTES} bytes decoded.`, { limit: String(MAX_MAP_BYTES) });
}

/** `http://host/dist/app.js` → `~/dist/app.js` (scheme and host are not part of an artifact's name). */
export function tildeName(url: string): string | null {
  const m = /^[a-z][\w+.-]*:\/\/[^/]+(\/[^?#]*)/i.exec(url);
  return m ? `~${m[1]}` : null;
}

type Frame = Record<string, any>;

/** What a frame resolved to (null: leave it as sent). */
export interface ResolvedFrame { filename: string; absPath: string; lineno: number; colno: number; function: string | null; contextLine: string | null; preContext: string[]; postContext: string[] }

/**
 * Resolves the frames of one event against the project's maps: a Map from
 * frame object to its resolution. Maps are read once per file.
 *
 * The resolved function name is the ORIGINAL name of the function the frame
 * is in, found in this order:
 * 1. the innermost named function around the original position, scanned in
 *    the original source from the map's `sourcesContent` (sourceScopes.ts);
 * 2. else the map's name token at the CALLER's position (the frame before it
 *    in the same stack, oldest first): a call site maps to the callee's
 *    original identifier, which is this frame's function — Sentry's own
 *    fallback, and the only thing a map without sources can say;
 * 3. else the frame's own (possibly minified) name.
 * The map's name at the frame's own position is never used: at a call site
 * it names the callee (reference A5), not the enclosing function.
 */
export async function resolveFrames(db: Db, projectId: string, event: Record<string, any>, frames: Frame[], shared?: MapCache): Promise<Map<Frame, ResolvedFrame>> {
  const out = new Map<Frame, ResolvedFrame>();
  const images: Record<string, any>[] = Array.isArray(event.debug_meta?.images) ? event.debug_meta.images : [];
  const debugIds = new Map(images.filter((i) => i?.type === 'sourcemap' && i.code_file && i.debug_id).map((i) => [String(i.code_file), String(i.debug_id).toLowerCase()]));
  const release = typeof event.release === 'string' ? event.release : null;
  // A caller resolving many events (grouping a batch) shares the loaded maps and frees them itself.
  const consumers = shared?.consumers ?? new Map<string, SourceMapConsumer | null>();
  // Each frame's caller: the frame before it in its own exception's stack.
  const callerOf = new Map<Frame, Frame>();
  for (const x of exceptionsOf(event)) framesOf(x).forEach((f, k, all) => { if (k > 0) callerOf.set(f, all[k - 1]); });
  const positions = new Map<Frame, { key: string; c: SourceMapConsumer; pos: NullableMappedPosition } | null>();
  const scopes = new Map<string, FunctionScope[] | null>();

  const positionOf = async (f: Frame) => {
    if (positions.has(f)) return positions.get(f)!;
    let found: { key: string; c: SourceMapConsumer; pos: NullableMappedPosition } | null = null;
    // The frame's file as the SDK named it: its `abs_path` and its `filename` (either may be what the map was uploaded as).
    const files = [...new Set([f.abs_path, f.filename].filter((x): x is string => typeof x === 'string' && x.length > 0))];
    if (files.length && Number.isInteger(f.lineno) && Number.isInteger(f.colno) && f.lineno > 0 && f.colno > 0) {
      const debugId = files.map((x) => debugIds.get(x)).find((x) => x !== undefined) ?? null;
      const key = `${debugId ?? ''}\0${release ?? ''}\0${files.join('\0')}`;
      // Keys name a map within one project: a shared cache is one project's.
      if (!consumers.has(key)) consumers.set(key, await loadConsumer(db, projectId, debugId, release, files));
      const c = consumers.get(key);
      if (c) {
        try {
          const pos = c.originalPositionFor({ line: f.lineno, column: f.colno - 1 });
          if (pos.source && pos.line !== null) found = { key, c, pos };
        } catch {
          // The mappings are parsed at the first lookup, and may turn out unusable
          // ("invalid base 64 character"): the map is dropped for every frame, which stay as sent.
          consumers.set(key, null);
          freeMap(c);
        }
      }
    }
    positions.set(f, found);
    return found;
  };

  /** One frame's resolution; whatever goes wrong with its map leaves the frame as sent. */
  const resolveOne = async (f: Frame): Promise<ResolvedFrame | null> => {
    const at = await positionOf(f);
    if (!at) return null;
    const { key, c, pos } = at;
    const source = pos.source!;
    const line = pos.line!;
    const content = c.sourceContentFor(source, true);
    const lines = content ? content.split(/\r?\n/) : null;
    let name: string | null = null;
    if (content && content.length <= MAX_SCOPE_SCAN_CHARS) {
      const sk = `${key}\0${source}`;
      if (!scopes.has(sk)) {
        try { scopes.set(sk, functionScopes(content)); } catch { scopes.set(sk, null); }
      }
      const found = scopes.get(sk);
      if (found) name = enclosingFunctionName(content, line, pos.column ?? 0, found);
    }
    if (!name) {
      const caller = callerOf.get(f);
      const callSite = caller ? await positionOf(caller) : null;
      name = callSite?.pos.name ?? null;
    }
    return {
      filename: source, absPath: source, lineno: line, colno: (pos.column ?? 0) + 1,
      function: name ?? (typeof f.function === 'string' ? f.function : null),
      contextLine: lines?.[line - 1] ?? null,
      preContext: lines ? lines.slice(Math.max(0, line - 1 - CONTEXT_LINES), line - 1) : [],
      postContext: lines ? lines.slice(line, line + CONTEXT_LINES) : [],
    };
  };

  try {
    for (const f of frames) {
      try {
        const r = await resolveOne(f);
        if (r) out.set(f, r);
      } catch {
        // An unusable map falls back to the original frame (spec); the other frames still resolve.
      }
    }
  } finally {
    if (!shared) for (const c of consumers.values()) if (c) freeMap(c);
  }
  return out;
}

/** Frees a map's memory (wasm); a map that failed to parse may fail here too, which changes nothing. */
function freeMap(c: SourceMapConsumer): void {
  try { c.destroy(); } catch { /* already unusable */ }
}

/** Maps loaded once for many events of one project (see `mapCache`). */
export interface MapCache { consumers: Map<string, SourceMapConsumer | null>; free(): void }

/** A cache of loaded maps for resolving many events of one project; `free` releases them. */
export function mapCache(): MapCache {
  const consumers = new Map<string, SourceMapConsumer | null>();
  return { consumers, free: () => { for (const c of consumers.values()) if (c) freeMap(c); consumers.clear(); } };
}

/**
 * The event as grouping should see it: frames a known map resolves replaced
 * by their original file, function, line and context line (the minified
 * module dropped), so minified builds of the same code group together and
 * the title and culprit name the original function. Other frames unchanged.
 */
export async function deminifiedForGrouping(db: Db, projectId: string, event: Record<string, any>, cache: MapCache): Promise<Record<string, any>> {
  const chain = exceptionsOf(event);
  const frames = chain.flatMap(framesOf);
  if (frames.length === 0) return event;
  const resolved = await resolveFrames(db, projectId, event, frames, cache);
  if (resolved.size === 0) return event;
  const values = chain.map((x) => ({
    ...x,
    stacktrace: { ...(x.stacktrace ?? {}), frames: framesOf(x).map((f) => {
      const r = resolved.get(f);
      if (!r) return f;
      const { module: _minified, ...rest } = f;
      return { ...rest, filename: r.filename, abs_path: r.absPath, function: r.function, lineno: r.lineno, colno: r.colno, context_line: r.contextLine };
    }) },
  }));
  return { ...event, exception: { values } };
}

/**
 * The map for a frame: by its debug id first; then (no map with that id, or
 * no id) by the event's release and the frame's file name, its `abs_path` or
 * `filename` as sent or as `~/path`, in that order of preference.
 */
async function loadConsumer(db: Db, projectId: string, debugId: string | null, release: string | null, files: string[]): Promise<SourceMapConsumer | null> {
  let row: { map_gzip: Buffer } | undefined;
  if (debugId) {
    row = await db.selectFrom('error_sourcemaps').select('map_gzip').where('project_id', '=', projectId).where('debug_id', '=', debugId)
      .orderBy('created_at', 'desc').executeTakeFirst();
  }
  if (!row && release) {
    const names = [...new Set(files.flatMap((f) => [f, tildeName(f)]).filter((x): x is string => !!x))];
    const rows = await db.selectFrom('error_sourcemaps').select(['filename', 'map_gzip']).where('project_id', '=', projectId)
      .where('release', '=', release).where('filename', 'in', names).orderBy('created_at', 'desc').execute();
    row = names.map((n) => rows.find((r) => r.filename === n)).find((r) => r !== undefined);
  }
  if (!row) return null;
  try {
    return await new SourceMapConsumer(JSON.parse(zlib.gunzipSync(row.map_gzip).toString('utf8')) as RawSourceMap);
  } catch {
    return null; // an unusable map: the frames stay as sent
  }
}
