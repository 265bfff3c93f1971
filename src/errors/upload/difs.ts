/**
 * Debug files (`POST /api/0/projects/{org}/{project}/files/difs/assemble/`):
 * sentry-cli sends `{<sha1>: {name, debug_id?, chunks}}`, one entry a file.
 * A Mach-O file (the DWARF file of a dSYM, as `debug-files upload` sends it)
 * and a ProGuard mapping (`proguard upload`, named `/proguard/<uuid>.txt`)
 * are stored through `uploadSymbols`, as `POST /symbols` stores them; other
 * kinds are refused with the reason.
 */
import type { Caller } from '../../auth/caller';
import type { Db } from '../../db/connect';
import type { RateLimits } from '../../pipeline/ratelimit';
import { readMachO } from '../symbols/macho';
import { canonicalUuid, proguardUuid, uploadSymbols } from '../symbols/upload';
import { assembleOnce, type Outcome } from './assembly';
import { refusal, SHA1 } from './chunks';
import type { UploadProject } from './projects';

interface DifRequest { name?: unknown; debug_id?: unknown; chunks?: unknown }

const MACHO_MAGICS = new Set([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe, 0xbebafeca]);

/** The upload headers of `POST /symbols` for one assembled file, or a refusal saying what it is not. */
function symbolsHeaders(project: UploadProject, name: string, declared: string | null, file: Buffer): Record<string, string> {
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
  for (const [checksum, raw] of Object.entries(body as Record<string, DifRequest>)) {
    const chunks = raw?.chunks;
    if (!SHA1.test(checksum) || !Array.isArray(chunks) || chunks.some((c) => typeof c !== 'string' || !SHA1.test(c))) {
      throw refusal(400, `File ${checksum.slice(0, 60)}: a SHA-1 checksum and a list of chunk checksums are required.`);
    }
    const name = typeof raw.name === 'string' && raw.name ? raw.name : checksum;
    const declared = typeof raw.debug_id === 'string' ? raw.debug_id : null;
    const outcome = await assembleOnce(db, limits, caller, { kind: 'dif', checksum, chunks: chunks as string[], target: project.id }, 'symbols', async (file) => {
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
