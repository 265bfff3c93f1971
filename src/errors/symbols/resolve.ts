/**
 * Mobile frames resolved against uploaded symbols when an issue is read (so
 * symbols uploaded after the event still apply), as source maps are for
 * JavaScript:
 *
 * - Android (Java/Kotlin frames with `module` = class and `function` =
 *   method): the ProGuard/R8 mapping whose ProGuard UUID the event names
 *   (`debug_meta.images` of type `proguard`), else that of the build whose
 *   release equals the event's release exactly; a frame can become several
 *   (inlined methods).
 * - iOS (frames with `instruction_addr`): the `macho` image of
 *   `debug_meta.images` holding the address, its dSYM found by Mach-O UUID,
 *   the address taken into the image's own address space
 *   (`addr − image_addr + image_vmaddr`) and looked up in the DWARF
 *   line tables; inlined functions become frames of their own.
 *
 * Anything that cannot be used leaves the frame as the SDK sent it.
 */
import zlib from 'node:zlib';
import type { Db } from '../../db/connect';
import { openDsym, type NativeFrame } from './dwarf';
import { readMachO } from './macho';
import { originalClass, parseProguardMapping, retraceFrame, type ProguardMapping } from './proguard';
import { canonicalUuid } from './upload';

type Frame = Record<string, any>;

/** One frame as symbols resolved it (the fields a read shows). */
export interface NativeResolved {
  filename: string | null; absPath: string | null; module: string | null; function: string | null; lineno: number | null; colno: number | null;
  contextLine: null; preContext: string[]; postContext: string[];
}

/** What the symbols of one event resolved: frames (one may become several, outermost first) and exception types. */
export interface NativeResolution {
  frames: Map<Frame, NativeResolved[]>;
  /** Original exception class of an exception object (Android). */
  types: Map<Record<string, any>, string>;
}

/** An address as SDKs send it (`"0x1a2b"`, a decimal string, or a number) as a bigint; null when it is none. */
export function addressOf(v: unknown): bigint | null {
  try {
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
    if (typeof v === 'string' && /^(0x[0-9a-f]{1,16}|\d{1,20})$/i.test(v.trim())) return BigInt(v.trim());
  } catch { /* not an address */ }
  return null;
}

const isJavaFrame = (f: Frame) => typeof f.module === 'string' && typeof f.function === 'string' && f.instruction_addr === undefined;

/** Resolves the Android and iOS frames of one event; `chain` is its exceptions (oldest first), `frames` of each. */
export async function resolveNative(db: Db, projectId: string, event: Record<string, any>, chain: Record<string, any>[], framesOf: (x: Record<string, any>) => Frame[]): Promise<NativeResolution> {
  const out: NativeResolution = { frames: new Map(), types: new Map() };
  const all = chain.flatMap(framesOf);
  if (all.some(isJavaFrame)) await resolveAndroid(db, projectId, event, chain, framesOf, out);
  if (all.some((f) => f.instruction_addr !== undefined)) await resolveIos(db, projectId, event, chain, framesOf, out);
  return out;
}

/** The ProGuard UUIDs an event names (the Android SDK sends its build's mapping id). */
function proguardIds(event: Record<string, any>): string[] {
  const images: unknown[] = Array.isArray(event.debug_meta?.images) ? event.debug_meta.images : [];
  return images.flatMap((i: any) => (i?.type === 'proguard' && typeof i.uuid === 'string' && /^[0-9a-f-]{32,36}$/i.test(i.uuid) ? [canonicalUuid(i.uuid)] : []));
}

async function resolveAndroid(db: Db, projectId: string, event: Record<string, any>, chain: Record<string, any>[], framesOf: (x: Record<string, any>) => Frame[], out: NativeResolution) {
  const mapping = () => db.selectFrom('error_symbol_files as f').innerJoin('error_symbol_builds as b', 'b.id', 'f.build_id').select('f.content_gzip')
    .where('b.project_id', '=', projectId).where('b.platform', '=', 'android');
  const ids = proguardIds(event);
  let row = ids.length ? await mapping().where('f.project_id', '=', projectId).where('f.debug_id', 'in', ids).executeTakeFirst() : undefined;
  if (!row && typeof event.release === 'string') row = await mapping().where('b.release', '=', event.release).executeTakeFirst();
  if (!row) return;
  let m: ProguardMapping;
  try { m = parseProguardMapping(zlib.gunzipSync(row.content_gzip).toString('utf8')); } catch { return; }
  for (const x of chain) {
    const type = typeof x.type === 'string' ? x.type : null;
    if (type) {
      const full = typeof x.module === 'string' && x.module ? `${x.module}.${type}` : type;
      const orig = originalClass(m, full);
      if (orig) out.types.set(x, orig);
    }
    for (const f of framesOf(x)) {
      if (!isJavaFrame(f)) continue;
      const r = retraceFrame(m, { module: f.module, function: f.function, lineno: Number.isInteger(f.lineno) ? f.lineno : null });
      if (!r || r.length === 0) continue;
      // retraceFrame answers innermost first; frames read oldest (outermost) first.
      out.frames.set(f, r.slice().reverse().map((g) => ({
        filename: g.filename, absPath: g.filename, module: g.module, function: g.function, lineno: g.lineno, colno: null,
        contextLine: null, preContext: [], postContext: [],
      })));
    }
  }
}

interface Image { debugId: string; addr: bigint; size: bigint | null; vmaddr: bigint | null }

async function resolveIos(db: Db, projectId: string, event: Record<string, any>, chain: Record<string, any>[], framesOf: (x: Record<string, any>) => Frame[], out: NativeResolution) {
  const raw: Record<string, any>[] = Array.isArray(event.debug_meta?.images) ? event.debug_meta.images : [];
  const images: Image[] = [];
  for (const i of raw) {
    if (!i || !['macho', 'apple'].includes(i.type) || typeof (i.debug_id ?? i.uuid) !== 'string') continue;
    const addr = addressOf(i.image_addr);
    const id = String(i.debug_id ?? i.uuid).slice(0, 36);
    if (addr === null || !/^[0-9a-f-]{32,36}$/i.test(id)) continue;
    images.push({ debugId: canonicalUuid(id), addr, size: addressOf(i.image_size), vmaddr: addressOf(i.image_vmaddr) });
  }
  if (images.length === 0) return;
  const rows = await db.selectFrom('error_symbol_files').select(['debug_id', 'content_gzip']).where('project_id', '=', projectId)
    .where('debug_id', 'in', [...new Set(images.map((i) => i.debugId))]).execute();
  const dsyms = new Map<string, { lookup(a: bigint): NativeFrame[]; text: bigint } | null>();
  for (const r of rows) {
    if (!r.debug_id || dsyms.has(r.debug_id)) continue;
    try {
      const buf = zlib.gunzipSync(r.content_gzip);
      const slice = readMachO(buf).find((s) => canonicalUuid(s.uuid) === r.debug_id);
      const d = slice ? openDsym(buf, r.debug_id) : null;
      dsyms.set(r.debug_id, d && slice ? { lookup: (a) => d.lookup(a), text: slice.textVmAddr } : null);
    } catch {
      dsyms.set(r.debug_id, null);
    }
  }
  for (const x of chain) {
    const frames = framesOf(x);
    // Caller frames hold return addresses, one instruction past the call: look up the byte before
    // (Sentry's `instruction_addr_adjustment` "auto": every frame but the crashing one, the last).
    const adjust = String(x.stacktrace?.instruction_addr_adjustment ?? 'auto');
    frames.forEach((f, idx) => {
      const addr = addressOf(f.instruction_addr);
      if (addr === null) return;
      const explicit = addressOf(f.image_addr);
      const img = explicit !== null ? images.find((i) => i.addr === explicit)
        : images.find((i) => addr >= i.addr && (i.size === null || addr < i.addr + i.size));
      const d = img ? dsyms.get(img.debugId) : null;
      if (!img || !d) return;
      const crashing = idx === frames.length - 1;
      const back = adjust === 'all' || ((adjust === 'auto' || adjust === 'all_but_first') && !crashing) ? 1n : 0n;
      const vm = addr - img.addr + (img.vmaddr && img.vmaddr > 0n ? img.vmaddr : d.text) - back;
      let found;
      try { found = d.lookup(vm); } catch { return; }
      if (!found || found.length === 0) return;
      // lookup answers innermost first; frames read outermost first.
      out.frames.set(f, found.slice().reverse().map((n) => ({
        filename: n.file, absPath: n.file, module: typeof f.package === 'string' ? f.package : null, function: n.function, lineno: n.line, colno: n.column,
        contextLine: null, preContext: [], postContext: [],
      })));
    });
  }
}
