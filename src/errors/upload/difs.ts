/**
 * Debug files (`POST /api/0/projects/{org}/{project}/files/difs/assemble/`):
 * sentry-cli sends `{<sha1>: {name, debug_id?, chunks}}`, one entry a file.
 * A Mach-O file (the DWARF file of a dSYM, as `debug-files upload` sends it)
 * and a ProGuard mapping (`proguard upload`, named `/proguard/<uuid>.txt`)
 * are stored through `uploadSymbols`, as `POST /symbols` stores them; other
 * kinds are refused with the reason. sentry-cli 2's `upload-proguard` posts
 * its mappings whole instead, zipped (`files/dsyms/`): `uploadZippedDifs`.
 */
import crypto from 'node:crypto';
import { unzipSync } from 'fflate';
import type { Caller } from '../../auth/caller';
import type { Db } from '../../db/connect';
import type { RateLimits } from '../../pipeline/ratelimit';
import { readMachO } from '../symbols/macho';
import { canonicalUuid, MAX_SYMBOLS_BYTES, proguardUuid, uploadSymbols } from '../symbols/upload';
import { assembleOnce, type Outcome } from './assembly';
import { multipartParts, refusal, SHA1 } from './chunks';
import type { UploadProject } from './projects';

interface DifRequest { name?: unknown; debug_id?: unknown; chunks?: unknown }

const MACHO_MAGICS = new Set([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe, 0xbebafeca]);

/** The upload headers of `POST /symbols` for one assembled file, or a refusal saying what it is not. */
export function symbolsHeaders(project: UploadProject, name: string, declared: string | null, file: Buffer): Record<string, string> {
  const base = { 'x-service-project-ref': project.ref, 'x-service-symbol-name': name.split('/').pop()!.slice(0, 255) || 'debug-file' };
  if (file.length >= 4 && MACHO_MAGICS.has(file.readUInt32BE(0))) {
    let ids: string[] = [];
    try { ids = readMachO(file).map((s) => canonicalUuid(s.uuid)); } catch { /* answered below */ }
    if (ids.length === 0) throw refusal(400, `${name}: a Mach-O file without a UUID cannot be matched to events.`);
    const id = declared && ids.includes(canonicalUuid(declared)) ? [canonicalUuid(declared)] : ids;
    return { ...base, 'x-service-platform': 'ios', 'x-service-debug-ids': id.join(',') };
  }
  if (/ -> [^\s]+:\s*$/m.test(file.subarray(0, 1024 * 1024).toString('utf8'))) {
    return { ...base, 'x-service-platform': 'android', 'x-service-debug-ids': proguardUuid(file) };
  }
  throw refusal(400, `${name}: Vigil symbolicates iOS (Mach-O dSYMs) and Android (ProGuard mappings) only; this file is neither.`);
}

/** One answer per file of the request, keyed by its checksum. */
export async function assembleDifs(db: Db, limits: RateLimits, caller: Caller, project: UploadProject, body: unknown): Promise<Record<string, Outcome & { dif?: unknown }>> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw refusal(400, 'The body must map each file\'s SHA-1 checksum to its name and chunks.');
  const out: Record<string, Outcome & { dif?: unknown }> = {};
  const files = Object.entries(body as Record<string, DifRequest>);
  for (const [i, [checksum, raw]] of files.entries()) {
    const chunks = raw?.chunks;
    if (!SHA1.test(checksum) || !Array.isArray(chunks) || chunks.some((c) => typeof c !== 'string' || !SHA1.test(c))) {
      throw refusal(400, `File ${checksum.slice(0, 60)}: a SHA-1 checksum and a list of chunk checksums are required.`);
    }
    const name = typeof raw.name === 'string' && raw.name ? raw.name : checksum;
    const declared = typeof raw.debug_id === 'string' ? raw.debug_id : null;
    // Files may share chunks: those of the files after this one stay when this one's go.
    const shared = files.slice(i + 1).flatMap(([, f]) => (Array.isArray(f?.chunks) ? f.chunks.filter((c): c is string => typeof c === 'string') : []));
    const outcome = await assembleOnce(db, limits, caller, { kind: 'dif', checksum, chunks: chunks as string[], target: project.id, shared }, 'symbols', async (file) => {
      const stored = await uploadSymbols(db, caller, file, symbolsHeaders(project, name, declared, file));
      const debugId = stored.debugIds[0] ?? null;
      // What sentry-cli prints for a stored file: its id, object name and architecture.
      return { id: stored.id, uuid: debugId, debugId, objectName: name, cpuName: 'any', symbolType: stored.platform === 'ios' ? 'macho' : 'proguard',
        headers: {}, size: file.length, sha1: checksum, dateCreated: new Date().toISOString(), data: { features: [] } };
    });
    const { result, ...rest } = outcome;
    out[checksum] = result ? { ...rest, dif: result } : rest;
  }
  return out;
}

/** `POST /api/0/projects/{org}/{project}/files/dsyms/`: zip files of debug files, one symbols upload each. */
export async function uploadZippedDifs(db: Db, limits: RateLimits, caller: Caller, project: UploadProject, body: Buffer, contentType: string | undefined) {
  const files: { name: string; data: Buffer }[] = [];
  for (const part of multipartParts(body, contentType)) {
    if (part.name !== 'file') continue;
    let entries: Record<string, Uint8Array>;
    let over: string | null = null;
    try {
      // A file past the symbols cap is not inflated (a zip bomb stops here).
      entries = unzipSync(part.data, { filter: (f) => (f.originalSize <= MAX_SYMBOLS_BYTES ? true : (over = f.name, false)) });
    } catch {
      throw refusal(400, 'Debug files must be sent as a zip archive.');
    }
    if (over !== null) throw refusal(413, `${over}: a debug file may be at most ${MAX_SYMBOLS_BYTES} bytes.`);
    for (const [name, data] of Object.entries(entries)) if (data.length > 0) files.push({ name, data: Buffer.from(data) });
  }
  if (files.length === 0) throw refusal(400, 'The upload holds no debug file.');
  const out = [];
  for (const f of files) {
    await limits.consume(caller.organizationId, 'symbols');
    const stored = await uploadSymbols(db, caller, f.data, symbolsHeaders(project, f.name, null, f.data));
    const debugId = stored.debugIds[0] ?? null;
    out.push({ id: stored.id, uuid: debugId, debugId, objectName: f.name, cpuName: 'any', symbolType: stored.platform === 'ios' ? 'macho' : 'proguard',
      headers: {}, size: f.data.length, sha1: crypto.createHash('sha1').update(f.data).digest('hex'), dateCreated: new Date().toISOString(), data: { features: [] } });
  }
  return out;
}
