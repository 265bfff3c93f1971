/**
 * POST /symbols: mobile debug symbols per build. The body is the file,
 * gzip-compressed: for iOS a zipped `.dSYM` bundle (or the bare DWARF Mach-O
 * file inside one), for Android a ProGuard/R8 `mapping.txt`. iOS builds are
 * matched by Mach-O UUID, Android builds by ProGuard UUID (the one the Sentry
 * Gradle plugin and sentry-cli derive from the file, which events carry in
 * `debug_meta`) when the upload declares it, and by release
 * (`<applicationId>@<versionName>+<versionCode>`, exactly). The same build
 * uploaded again replaces its symbols; the newest 20 builds of a project are
 * kept.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { unzipSync } from 'fflate';
import { sql } from 'kysely';
import type { Caller } from '../../auth/caller';
import type { Db } from '../../db/connect';
import { newId } from '../../crypto/ids';
import { audit } from '../../domain/audit';
import { ApiError, invalid, notFound } from '../../pipeline/errors';
import { readMachO } from './macho';

/** Uploads over this (as sent, compressed) are refused with 413; the transport reads no more. */
export const MAX_SYMBOLS_BYTES = 200 * 1024 * 1024;
/** Decompressed, a file may be at most this large (a gzip bomb is refused, not inflated). */
const MAX_INFLATED_BYTES = 1024 * 1024 * 1024;
/** Builds kept per project; the oldest go beyond it. */
export const BUILDS_KEPT = 20;

/** An Android release as the SDKs send it: `<applicationId>@<versionName>+<versionCode>`. */
const ANDROID_RELEASE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*@[^@\s+]+\+\d+$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** A Mach-O UUID in its canonical form: lowercase, dashed. */
export function canonicalUuid(s: string): string {
  const h = s.replace(/-/g, '').toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

interface Upload { content: Buffer; projectRef: number; platform: string; symbolName: string; release: string | null; debugIds: string | null }

/** A name-based (version 5) UUID, as RFC 4122 makes it. */
function uuid5(namespace: string, name: Buffer | string): string {
  const h = crypto.createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name).digest().subarray(0, 16);
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  return canonicalUuid(h.toString('hex'));
}

/**
 * A ProGuard mapping's UUID: version 5 of its bytes in the namespace of the
 * name "guardsquare.com" (in the DNS namespace), the id the Sentry tools give
 * a mapping and the Android SDK sends; computed, so a declared one is checked.
 */
export function proguardUuid(mapping: Buffer): string {
  return uuid5(uuid5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'guardsquare.com'), mapping);
}

/** The upload from REST (raw body and headers) or Connect (one message). */
function uploadOf(body: unknown, headers: Record<string, string | undefined>): Upload {
  if (Buffer.isBuffer(body) || body === undefined) {
    const ref = headers['x-service-project-ref'];
    if (!ref) throw invalid('X-Service-Project-Ref', 'is required', 'missing_field');
    if (!/^\d{1,15}$/.test(ref.trim()) || Number(ref) < 1) throw invalid('X-Service-Project-Ref', 'must be a positive integer');
    return {
      content: body ?? Buffer.alloc(0), projectRef: Number(ref), platform: headers['x-service-platform']?.trim() ?? '',
      symbolName: headers['x-service-symbol-name']?.trim() ?? '', release: headers['x-service-release']?.trim() || null,
      debugIds: headers['x-service-debug-ids']?.trim() || null,
    };
  }
  const m = body as Record<string, unknown>;
  const content = m.content instanceof Uint8Array ? Buffer.from(m.content) : typeof m.content === 'string' ? Buffer.from(m.content, 'base64') : Buffer.alloc(0);
  return {
    content, projectRef: Number(m.projectRef ?? 0), platform: String(m.platform ?? ''), symbolName: String(m.symbolName ?? ''),
    release: typeof m.release === 'string' && m.release ? m.release : null, debugIds: typeof m.debugIds === 'string' && m.debugIds ? m.debugIds : null,
  };
}

function unreadable(reason: string): ApiError {
  return new ApiError(400, 'symbols_invalid', `The symbols cannot be read: ${reason}.`, { reason }, [{ field: 'body', reason }]);
}

/** Gunzips the body (a transport-decoded body is taken as it is). */
function inflate(content: Buffer): Buffer {
  if (content.length === 0) throw invalid('body', 'is empty', 'missing_field');
  if (content[0] !== 0x1f || content[1] !== 0x8b) return content;
  try {
    return zlib.gunzipSync(content, { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new ApiError(413, 'symbols_too_large', `Symbols may be at most ${MAX_INFLATED_BYTES} bytes decompressed.`, { limit: String(MAX_INFLATED_BYTES) });
    throw unreadable('the body is not valid gzip');
  }
}

/** The Mach-O files of an iOS upload with their slices' UUIDs: a zipped .dSYM bundle, or one Mach-O file. */
function machOFiles(data: Buffer): { uuids: string[]; content: Buffer }[] {
  const candidates: Buffer[] = [];
  if (data[0] === 0x50 && data[1] === 0x4b) {
    let entries: Record<string, Uint8Array>;
    try {
      // Only the DWARF files of the bundle are inflated (Info.plist and the rest are not needed).
      entries = unzipSync(data, { filter: (f) => /(^|\/)Contents\/Resources\/DWARF\/[^/]+$/.test(f.name) && f.originalSize <= MAX_INFLATED_BYTES });
    } catch {
      throw unreadable('the zip archive is damaged');
    }
    candidates.push(...Object.values(entries).map((u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength)));
  } else {
    candidates.push(data);
  }
  const out: { uuids: string[]; content: Buffer }[] = [];
  for (const c of candidates) {
    try {
      const uuids = readMachO(c).map((s) => canonicalUuid(s.uuid));
      if (uuids.length) out.push({ uuids, content: c });
    } catch { /* not Mach-O: skipped */ }
  }
  return out;
}

/** POST /symbols. */
export async function uploadSymbols(db: Db, caller: Caller, body: unknown, headers: Record<string, string | undefined> = {}) {
  const u = uploadOf(body, headers);
  if (u.platform !== 'ios' && u.platform !== 'android') throw invalid('X-Service-Platform', 'must be ios or android', u.platform ? 'invalid_field' : 'missing_field');
  if (!u.symbolName) throw invalid('X-Service-Symbol-Name', 'is required', 'missing_field');
  if (u.symbolName.length > 255) throw invalid('X-Service-Symbol-Name', 'is at most 255 characters');
  if (u.release !== null && u.release.length > 250) throw invalid('X-Service-Release', 'is at most 250 characters');
  if (u.debugIds !== null && u.debugIds.length > 4096) throw invalid('X-Service-Debug-Ids', 'is at most 4096 characters');
  if (u.content.length > MAX_SYMBOLS_BYTES) throw new ApiError(413, 'symbols_too_large', `Symbols may be at most ${MAX_SYMBOLS_BYTES} bytes.`, { limit: String(MAX_SYMBOLS_BYTES) });
  let declared: string[] = [];
  declared = (u.debugIds ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const bad = declared.find((d) => !UUID.test(d));
  if (bad !== undefined) throw invalid('X-Service-Debug-Ids', `"${bad.slice(0, 40)}" is not a ${u.platform === 'ios' ? 'Mach-O' : 'ProGuard'} UUID`);
  declared = [...new Set(declared.map(canonicalUuid))];
  if (u.platform === 'android') {
    if (!u.release && declared.length === 0) throw invalid('X-Service-Release', 'is required for android (or the mapping\'s ProGuard UUID in X-Service-Debug-Ids)', 'missing_field');
    if (u.release && !ANDROID_RELEASE.test(u.release)) throw invalid('X-Service-Release', 'must be <applicationId>@<versionName>+<versionCode>');
    if (declared.length > 1) throw invalid('X-Service-Debug-Ids', 'names one ProGuard UUID for android');
  } else if (declared.length === 0) {
    throw invalid('X-Service-Debug-Ids', 'is required for ios', 'missing_field');
  }

  let q = db.selectFrom('error_projects').select(['id', 'workspace_id']).where('organization_id', '=', caller.organizationId).where('ref', '=', String(u.projectRef));
  if (caller.workspaceIds !== null) q = q.where('workspace_id', 'in', caller.workspaceIds.length ? [...caller.workspaceIds] : ['']);
  const project = await q.executeTakeFirst();
  if (!project) throw notFound('error project', 'X-Service-Project-Ref');

  const data = inflate(u.content);
  let files: { debugId: string | null; content: Buffer }[];
  let debugIds: string[] = [];
  if (u.platform === 'android') {
    const text = data.toString('utf8');
    if (!/^[^\s#][^\s]* -> [^\s]+:\s*$/m.test(text)) throw unreadable('no class mapping (`original -> obfuscated:`) in the file');
    if (declared.length) {
      const uuid = proguardUuid(data);
      if (declared[0] !== uuid) throw invalid('X-Service-Debug-Ids', `${declared[0]} is not this mapping's ProGuard UUID (${uuid})`);
      debugIds = [uuid];
    }
    files = [{ debugId: debugIds[0] ?? null, content: zlib.gzipSync(data, { level: 6 }) }];
  } else {
    const found = machOFiles(data);
    if (found.length === 0) throw unreadable('no Mach-O file with a UUID (expected a zipped .dSYM bundle or its DWARF file)');
    debugIds = [...new Set(found.flatMap((f) => f.uuids))];
    const missing = declared.filter((d) => !debugIds.includes(d));
    if (missing.length) throw invalid('X-Service-Debug-Ids', `${missing.join(', ')} is not in the upload (it has ${debugIds.join(', ')})`);
    // A fat file serves each of its slices' UUIDs: one row per UUID, so a lookup is one index probe.
    const gz = found.map((f) => ({ f, gz: zlib.gzipSync(f.content, { level: 6 }) }));
    files = gz.flatMap(({ f, gz: g }) => f.uuids.map((id) => ({ debugId: id, content: g })));
  }

  const id = newId('sym');
  const replaced = await db.transaction().execute(async (tx) => {
    // The same build: the same release (Android) or any of the same UUIDs (iOS, and Android by ProGuard UUID).
    const same = await tx.deleteFrom('error_symbol_builds').where('project_id', '=', project.id).where('platform', '=', u.platform)
      .where((w) => w.or([
        ...(u.platform === 'android' && u.release ? [w('release', '=', u.release)] : []),
        w(sql<boolean>`debug_ids && ${sql.val(debugIds)}::text[]`, '=', true),
      ])).returning('id').execute();
    await tx.insertInto('error_symbol_builds').values({
      id, project_id: project.id, organization_id: caller.organizationId, platform: u.platform, name: u.symbolName, release: u.release,
      debug_ids: debugIds, size_bytes: u.content.length,
    }).execute();
    await tx.insertInto('error_symbol_files').values(files.map((f) => ({ build_id: id, project_id: project.id, debug_id: f.debugId, content_gzip: f.content }))).execute();
    await tx.deleteFrom('error_symbol_builds').where('project_id', '=', project.id).where('id', 'not in',
      tx.selectFrom('error_symbol_builds').select('id').where('project_id', '=', project.id).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(BUILDS_KEPT)).execute();
    await audit(tx, caller, { action: 'symbols.uploaded', resourceType: 'error_project', resourceId: project.id, workspaceId: project.workspace_id,
      changes: { symbols: { from: null, to: { platform: u.platform, name: u.symbolName, release: u.release, debugIds, sizeBytes: u.content.length, replaced: same.length > 0 } } } });
    return same.length > 0;
  });
  return { id, platform: u.platform as 'ios' | 'android', release: u.release, debugIds, replaced };
}

/**
 * Gives the Android build of a ProGuard UUID a release (what sentry-cli 2's
 * `upload-proguard --app-id --version --version-code` asks after the
 * upload), so events of that release match it even without the UUID; an
 * older build of the same release is replaced, as an upload of it would be.
 */
export async function setProguardRelease(db: Db, caller: Caller, projectId: string, workspaceId: string, uuid: string, release: string) {
  if (!UUID.test(uuid)) throw invalid('proguard_uuid', 'is not a ProGuard UUID');
  if (!ANDROID_RELEASE.test(release)) throw invalid('release_name', 'must be <applicationId>@<versionName>+<versionCode>');
  const id = canonicalUuid(uuid);
  await db.transaction().execute(async (tx) => {
    const build = await tx.selectFrom('error_symbol_builds').select('id').where('project_id', '=', projectId).where('platform', '=', 'android')
      .where(sql<boolean>`${id} = any(debug_ids)`).executeTakeFirst();
    if (!build) throw notFound('ProGuard mapping', 'proguard_uuid');
    await tx.deleteFrom('error_symbol_builds').where('project_id', '=', projectId).where('platform', '=', 'android').where('release', '=', release).where('id', '!=', build.id).execute();
    await tx.updateTable('error_symbol_builds').set({ release }).where('id', '=', build.id).execute();
    await audit(tx, caller, { action: 'symbols.uploaded', resourceType: 'error_project', resourceId: projectId, workspaceId,
      changes: { symbols: { from: null, to: { platform: 'android', release, debugIds: [id], associated: true } } } });
  });
}
