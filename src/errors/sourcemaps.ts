/**
 * JavaScript source maps (reference A5): uploaded per project, matched by
 * the frame's debug id (`debug_meta.images` of type `sourcemap`, whose
 * `code_file` is the frame's `abs_path`) first, then by release and file
 * name (`~/path` standing for scheme and host). Frames are resolved when an
 * issue is read, so a map uploaded after the event still applies; a map that
 * cannot be used leaves the frame as the SDK sent it.
 */
import zlib from 'node:zlib';
import { SourceMapConsumer, type RawSourceMap } from 'source-map';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { audit } from '../domain/audit';
import { ApiError, invalid, notFound } from '../pipeline/errors';

/** A map over this, decoded, is refused (413). */
export const MAX_MAP_BYTES = 40 * 1024 * 1024;
const CONTEXT_LINES = 5;

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
 */
export async function resolveFrames(db: Db, projectId: string, event: Record<string, any>, frames: Frame[]): Promise<Map<Frame, ResolvedFrame>> {
  const out = new Map<Frame, ResolvedFrame>();
  const images: Record<string, any>[] = Array.isArray(event.debug_meta?.images) ? event.debug_meta.images : [];
  const debugIds = new Map(images.filter((i) => i?.type === 'sourcemap' && i.code_file && i.debug_id).map((i) => [String(i.code_file), String(i.debug_id).toLowerCase()]));
  const release = typeof event.release === 'string' ? event.release : null;
  const consumers = new Map<string, SourceMapConsumer | null>();
  try {
    for (const f of frames) {
      const file = String(f.abs_path ?? f.filename ?? '');
      if (!file || !Number.isInteger(f.lineno) || !Number.isInteger(f.colno)) continue;
      const debugId = debugIds.get(file) ?? null;
      const key = debugId ? `d:${debugId}` : `r:${release}:${file}`;
      if (!consumers.has(key)) consumers.set(key, await loadConsumer(db, projectId, debugId, release, file));
      const c = consumers.get(key);
      if (!c) continue;
      const pos = c.originalPositionFor({ line: f.lineno, column: f.colno - 1 });
      if (!pos.source || pos.line === null) continue;
      const content = c.sourceContentFor(pos.source, true);
      const lines = content ? content.split(/\r?\n/) : null;
      out.set(f, {
        filename: pos.source, absPath: pos.source, lineno: pos.line, colno: (pos.column ?? 0) + 1,
        // The map's name at a call site is the callee's (reference A5): keep the frame's own function unless it has none.
        function: f.function ?? pos.name ?? null,
        contextLine: lines?.[pos.line - 1] ?? null,
        preContext: lines ? lines.slice(Math.max(0, pos.line - 1 - CONTEXT_LINES), pos.line - 1) : [],
        postContext: lines ? lines.slice(pos.line, pos.line + CONTEXT_LINES) : [],
      });
    }
  } finally {
    for (const c of consumers.values()) c?.destroy();
  }
  return out;
}

async function loadConsumer(db: Db, projectId: string, debugId: string | null, release: string | null, file: string): Promise<SourceMapConsumer | null> {
  let q = db.selectFrom('error_sourcemaps').select('map_gzip').where('project_id', '=', projectId);
  if (debugId) q = q.where('debug_id', '=', debugId);
  else {
    const names = [file, tildeName(file)].filter((x): x is string => !!x);
    if (!release) return null;
    q = q.where('release', '=', release).where('filename', 'in', names);
  }
  const row = await q.orderBy('created_at', 'desc').executeTakeFirst();
  if (!row) return null;
  try {
    return await new SourceMapConsumer(JSON.parse(zlib.gunzipSync(row.map_gzip).toString('utf8')) as RawSourceMap);
  } catch {
    return null; // an unusable map: the frames stay as sent
  }
}
