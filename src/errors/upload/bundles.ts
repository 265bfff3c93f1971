/**
 * Artifact bundles: the zip sentry-cli and the bundler plugins make of a
 * build's scripts and maps (`manifest.json` lists each file's `url`, `type`
 * and headers: `debug-id`, and for a script the `sourcemap` it references).
 * Each source map in it is stored through `uploadSourceMap`, as a
 * `POST /sourcemaps` would store it, for every project of the request: by
 * its debug id, and, when the bundle is for a release, under the release
 * and the name of the script that references it (frames name the script,
 * not the map). A bundle's `dist` does not narrow matching: Vigil matches
 * maps by debug id, then release and file name.
 */
import path from 'node:path';
import { unzipSync } from 'fflate';
import type { Caller } from '../../auth/caller';
import type { Db } from '../../db/connect';
import { ApiError } from '../../pipeline/errors';
import { MAX_MAP_BYTES, uploadSourceMap } from '../sourcemaps';
import { refusal } from './chunks';
import type { UploadProject } from './projects';

interface ManifestFile { url?: unknown; type?: unknown; headers?: Record<string, unknown> }

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** A manifest header by name, whatever its case (the tools have written `Sourcemap` and `sourcemap`). */
function header(f: ManifestFile, name: string): string | null {
  const hit = Object.entries(f.headers ?? {}).find(([k]) => k.toLowerCase() === name);
  return typeof hit?.[1] === 'string' ? hit[1] : null;
}

/** `~/static/app.js` and `app.js.map` → `~/static/app.js.map` (a script's map reference is relative to it). */
function resolveUrl(from: string, ref: string): string {
  if (/^[a-z][\w+.-]*:\/\//i.test(ref) || ref.startsWith('~/')) return ref;
  return path.posix.join(path.posix.dirname(from), ref);
}

/** Stores a bundle's maps; answers how many were stored. */
export async function storeBundle(db: Db, caller: Caller, file: Buffer, projects: UploadProject[], release: string | null): Promise<{ maps: number }> {
  const unzip = (keep: (name: string, size: number) => boolean) => {
    try {
      return unzipSync(file, { filter: (f) => keep(f.name, f.originalSize) });
    } catch {
      throw refusal(400, 'The artifact bundle is not a readable zip archive.');
    }
  };
  const manifestBytes = unzip((n) => n === 'manifest.json')['manifest.json'] ?? new Uint8Array();
  let manifest: { files?: Record<string, ManifestFile> };
  try {
    manifest = JSON.parse(Buffer.from(manifestBytes).toString('utf8'));
  } catch {
    throw refusal(400, 'The artifact bundle has no readable manifest.json.');
  }
  const files = Object.entries(manifest.files ?? {});
  // Only the maps are inflated (scripts and sources are not needed), none over the map cap.
  const mapNames = new Set(files.filter(([, f]) => f.type === 'source_map').map(([n]) => n));
  const tooLarge = new Set<string>();
  const entries = unzip((n, size) => mapNames.has(n) && (size <= MAX_MAP_BYTES || (tooLarge.add(n), false)));
  // Which script references each map: the map is stored under the script's name for release matching.
  const scriptOf = new Map<string, string>();
  for (const [, f] of files) {
    const ref = header(f, 'sourcemap');
    if (f.type === 'minified_source' && typeof f.url === 'string' && ref) scriptOf.set(resolveUrl(f.url, ref), f.url);
  }
  let maps = 0;
  for (const [name, f] of files) {
    if (f.type !== 'source_map' || typeof f.url !== 'string') continue;
    const bytes = entries[name];
    if (tooLarge.has(name)) throw refusal(413, `${f.url}: a source map may be at most ${MAX_MAP_BYTES} bytes decoded.`);
    if (!bytes) throw refusal(400, `${f.url} is listed in the bundle's manifest but not in the bundle.`);
    let map: Record<string, unknown>;
    try { map = JSON.parse(Buffer.from(bytes).toString('utf8')); } catch { throw refusal(400, `${f.url} is not JSON.`); }
    const id = header(f, 'debug-id') ?? (typeof map.debug_id === 'string' ? map.debug_id : typeof map.debugId === 'string' ? map.debugId : null);
    const debugId = id && UUID.test(id) ? id : undefined;
    // A map neither a debug id nor a release can find would never be used: skipped, as the tools skip it.
    if (!debugId && !release) continue;
    const filename = scriptOf.get(f.url) ?? f.url.replace(/\.map$/, '');
    for (const p of projects) {
      try {
        await uploadSourceMap(db, caller, { projectRef: Number(p.ref), filename, map, debugId, release: release ?? undefined });
      } catch (e) {
        // Said with the file's name: a bundle holds many maps.
        if (e instanceof ApiError) throw refusal(e.status, `${f.url}: ${e.message}`);
        throw e;
      }
    }
    maps++;
  }
  return { maps };
}
