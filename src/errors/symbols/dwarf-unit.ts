/**
 * DWARF 2–5 compilation units in .debug_info: unit headers, abbreviation
 * tables, DIE attributes in every standard form, and the address/string/range
 * indirections DWARF 5 added (.debug_addr, .debug_str_offsets,
 * .debug_rnglists) next to the DWARF 4 ones (.debug_ranges). Only what
 * symbolication needs is interpreted; other attributes are read to be skipped.
 */
import { Reader, DwarfError, check, stringAt, toNumber } from './dwarf-reader';

/** The debug sections of one Mach-O slice (Mach-O names without the leading "__"). */
export interface DwarfSections {
  info?: Buffer; abbrev?: Buffer; line?: Buffer; str?: Buffer; lineStr?: Buffer;
  strOffsets?: Buffer; addr?: Buffer; ranges?: Buffer; rnglists?: Buffer;
}

export const TAG = { compileUnit: 0x11, partialUnit: 0x3c, skeletonUnit: 0x4a, subprogram: 0x2e, inlinedSubroutine: 0x1d } as const;
export const AT = {
  name: 0x03, stmtList: 0x10, lowPc: 0x11, highPc: 0x12, compDir: 0x1b, abstractOrigin: 0x31, specification: 0x47,
  ranges: 0x55, callColumn: 0x57, callFile: 0x58, callLine: 0x59, linkageName: 0x6e, mipsLinkageName: 0x2007,
  strOffsetsBase: 0x72, addrBase: 0x73, rnglistsBase: 0x74,
} as const;

const F = {
  addr: 0x01, block2: 0x03, block4: 0x04, data2: 0x05, data4: 0x06, data8: 0x07, string: 0x08, block: 0x09, block1: 0x0a,
  data1: 0x0b, flag: 0x0c, sdata: 0x0d, strp: 0x0e, udata: 0x0f, refAddr: 0x10, ref1: 0x11, ref2: 0x12, ref4: 0x13, ref8: 0x14,
  refUdata: 0x15, indirect: 0x16, secOffset: 0x17, exprloc: 0x18, flagPresent: 0x19, strx: 0x1a, addrx: 0x1b, refSup4: 0x1c,
  strpSup: 0x1d, data16: 0x1e, lineStrp: 0x1f, refSig8: 0x20, implicitConst: 0x21, loclistx: 0x22, rnglistx: 0x23, refSup8: 0x24,
  strx1: 0x25, strx2: 0x26, strx3: 0x27, strx4: 0x28, addrx1: 0x29, addrx2: 0x2a, addrx3: 0x2b, addrx4: 0x2c,
  gnuAddrIndex: 0x1f01, gnuStrIndex: 0x1f02, gnuRefAlt: 0x1f20, gnuStrpAlt: 0x1f21,
} as const;
const STRX = new Set<number>([F.strx, F.strx1, F.strx2, F.strx3, F.strx4, F.gnuStrIndex]);
const ADDRX = new Set<number>([F.addrx, F.addrx1, F.addrx2, F.addrx3, F.addrx4, F.gnuAddrIndex]);
const REF_LOCAL = new Set<number>([F.ref1, F.ref2, F.ref4, F.ref8, F.refUdata]);
const CONSTANT = new Set<number>([F.data1, F.data2, F.data4, F.data8, F.udata, F.sdata, F.implicitConst]);

/** One attribute as read: `v` holds the number, offset, index or reference; `s` an inline string. */
export interface AttrVal { form: number; v: bigint; s?: string }
export interface Abbrev { tag: number; hasChildren: boolean; attrs: number[]; forms: number[]; consts: bigint[] }
export interface Die { offset: number; tag: number; hasChildren: boolean; attrs: Map<number, AttrVal> }
export type Range = readonly [start: bigint, end: bigint];

/** A compilation unit: its header, plus the bases and ranges taken from its root DIE. */
export interface Unit {
  offset: number; end: number; dieStart: number; version: number; is64: boolean; addrSize: number;
  abbrevs: Map<number, Abbrev>;
  addrBase: number; strOffsetsBase: number; rnglistsBase: number; baseAddr: bigint;
  name: string | null; compDir: string | null; stmtList: number | null; ranges: Range[];
}

/** Reads one abbreviation table (a dSYM usually shares one among all its units). */
export function parseAbbrevs(section: Buffer | undefined, offset: number): Map<number, Abbrev> {
  check(section, 'no .debug_abbrev');
  const r = new Reader(section, 0);
  r.seek(offset);
  const table = new Map<number, Abbrev>();
  for (;;) {
    const code = r.uleb();
    if (code === 0) return table;
    const abbrev: Abbrev = { tag: r.uleb(), hasChildren: r.u8() !== 0, attrs: [], forms: [], consts: [] };
    for (;;) {
      const attr = r.uleb();
      const form = r.uleb();
      if (attr === 0 && form === 0) break;
      abbrev.attrs.push(attr);
      abbrev.forms.push(form);
      abbrev.consts.push(form === F.implicitConst ? BigInt(r.sleb()) : 0n);
    }
    table.set(code, abbrev);
  }
}

function readAttr(r: Reader, u: Unit, form: number, implicit: bigint, depth = 0): AttrVal {
  const off = () => BigInt(r.offset(u.is64));
  const block = (len: number) => { r.skip(len); return 0n; };
  switch (form) {
    case F.addr: return { form, v: r.uint(u.addrSize) };
    case F.data1: case F.ref1: case F.flag: case F.strx1: case F.addrx1: return { form, v: BigInt(r.u8()) };
    case F.data2: case F.ref2: case F.strx2: case F.addrx2: return { form, v: BigInt(r.u16()) };
    case F.strx3: case F.addrx3: return { form, v: r.uint(3) };
    case F.data4: case F.ref4: case F.refSup4: case F.strx4: case F.addrx4: return { form, v: BigInt(r.u32()) };
    case F.data8: case F.ref8: case F.refSig8: case F.refSup8: return { form, v: r.u64() };
    case F.data16: r.skip(16); return { form, v: 0n };
    case F.sdata: return { form, v: BigInt(r.sleb()) };
    case F.udata: case F.refUdata: case F.strx: case F.addrx: case F.loclistx: case F.rnglistx:
    case F.gnuAddrIndex: case F.gnuStrIndex: return { form, v: r.ulebBig() };
    case F.string: return { form, v: 0n, s: r.cstr() };
    case F.strp: case F.lineStrp: case F.strpSup: case F.secOffset: case F.gnuRefAlt: case F.gnuStrpAlt: return { form, v: off() };
    // DWARF 2 wrote DW_FORM_ref_addr with the address size, later versions with the offset size.
    case F.refAddr: return { form, v: u.version <= 2 ? r.uint(u.addrSize) : off() };
    case F.block1: return { form, v: block(r.u8()) };
    case F.block2: return { form, v: block(r.u16()) };
    case F.block4: return { form, v: block(r.u32()) };
    case F.block: case F.exprloc: return { form, v: block(r.uleb()) };
    case F.flagPresent: return { form, v: 1n };
    case F.implicitConst: return { form, v: implicit };
    case F.indirect:
      check(depth < 4, 'DW_FORM_indirect loop');
      return readAttr(r, u, r.uleb(), implicit, depth + 1);
    // An unknown form has an unknown size: nothing after it in the unit can be read.
    default: throw new DwarfError(`unknown DWARF form 0x${form.toString(16)}`);
  }
}

/** Reads the DIE at the reader's position; null for a null entry (end of siblings). */
export function readDie(r: Reader, u: Unit): Die | null {
  const offset = r.pos;
  const code = r.uleb();
  if (code === 0) return null;
  const ab = u.abbrevs.get(code);
  check(ab, `unknown abbreviation code ${code}`);
  const attrs = new Map<number, AttrVal>();
  for (let i = 0; i < ab.attrs.length; i++) attrs.set(ab.attrs[i], readAttr(r, u, ab.forms[i], ab.consts[i]));
  return { offset, tag: ab.tag, hasChildren: ab.hasChildren, attrs };
}

/** An entry of .debug_addr (DW_FORM_addrx*). */
function indexedAddr(s: DwarfSections, u: Unit, index: bigint): bigint {
  check(s.addr, 'no .debug_addr');
  const r = new Reader(s.addr);
  r.seek(toNumber(BigInt(u.addrBase) + index * BigInt(u.addrSize)));
  return r.uint(u.addrSize);
}

/** An address-class attribute's value, or null when it is not an address. */
export function attrAddr(s: DwarfSections, u: Unit, a: AttrVal | undefined): bigint | null {
  if (!a) return null;
  if (a.form === F.addr) return a.v;
  if (ADDRX.has(a.form)) return indexedAddr(s, u, a.v);
  return null;
}

/** A string-class attribute's value. */
export function attrString(s: DwarfSections, u: Unit, a: AttrVal | undefined): string | null {
  if (!a) return null;
  if (a.form === F.string) return a.s ?? null;
  if (a.form === F.strp) return stringAt(s.str, a.v);
  if (a.form === F.lineStrp) return stringAt(s.lineStr, a.v);
  if (STRX.has(a.form) && s.strOffsets) {
    const r = new Reader(s.strOffsets);
    r.seek(toNumber(BigInt(u.strOffsetsBase) + a.v * (u.is64 ? 8n : 4n)));
    return stringAt(s.str, r.offset(u.is64));
  }
  return null;
}

/** The absolute .debug_info offset a reference attribute points to. */
export function attrRef(u: Unit, a: AttrVal | undefined): number | null {
  if (!a) return null;
  if (REF_LOCAL.has(a.form)) return toNumber(BigInt(u.offset) + a.v);
  if (a.form === F.refAddr) return toNumber(a.v);
  return null;
}

/** A constant-class attribute as an unsigned number (call_line, call_file, …). */
export function attrUint(a: AttrVal | undefined): number | null {
  if (!a || !CONSTANT.has(a.form) || a.v < 0n || a.v > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(a.v);
}

/** The address ranges a DIE covers: low_pc/high_pc (high as an address or an offset) or DW_AT_ranges. */
export function dieRanges(s: DwarfSections, u: Unit, die: Die): Range[] {
  const low = attrAddr(s, u, die.attrs.get(AT.lowPc));
  const highAttr = die.attrs.get(AT.highPc);
  if (low !== null && highAttr) {
    const high = CONSTANT.has(highAttr.form) ? low + highAttr.v : attrAddr(s, u, highAttr);
    return high !== null && high > low ? [[low, high]] : [];
  }
  const ra = die.attrs.get(AT.ranges);
  if (!ra) return [];
  if (u.version < 5) return rangeList(s, u, toNumber(ra.v));
  let at = toNumber(ra.v);
  if (ra.form === F.rnglistx) {
    // Index into the offsets table that starts at DW_AT_rnglists_base; offsets are relative to it.
    check(s.rnglists, 'no .debug_rnglists');
    const r = new Reader(s.rnglists);
    r.seek(toNumber(BigInt(u.rnglistsBase) + ra.v * (u.is64 ? 8n : 4n)));
    at = u.rnglistsBase + r.offset(u.is64);
  }
  return rnglist(s, u, at);
}

/** A DWARF 2–4 .debug_ranges list: (begin, end) pairs relative to the unit's base address. */
function rangeList(s: DwarfSections, u: Unit, offset: number): Range[] {
  check(s.ranges, 'no .debug_ranges');
  const r = new Reader(s.ranges);
  r.seek(offset);
  const max = (1n << BigInt(u.addrSize * 8)) - 1n;
  let base = u.baseAddr;
  const out: Range[] = [];
  for (;;) {
    const begin = r.uint(u.addrSize);
    const end = r.uint(u.addrSize);
    if (begin === 0n && end === 0n) return out;
    if (begin === max) base = end; // base address selection entry
    else if (end > begin) out.push([base + begin, base + end]);
  }
}

/** A DWARF 5 .debug_rnglists list. */
function rnglist(s: DwarfSections, u: Unit, offset: number): Range[] {
  check(s.rnglists, 'no .debug_rnglists');
  const r = new Reader(s.rnglists);
  r.seek(offset);
  const addrx = (i: bigint) => indexedAddr(s, u, i);
  let base = u.baseAddr;
  const out: Range[] = [];
  const push = (a: bigint, b: bigint) => { if (b > a) out.push([a, b]); };
  for (;;) {
    const kind = r.u8();
    switch (kind) {
      case 0: return out; // DW_RLE_end_of_list
      case 1: base = addrx(r.ulebBig()); break; // base_addressx
      case 2: { const a = addrx(r.ulebBig()); push(a, addrx(r.ulebBig())); break; } // startx_endx
      case 3: { const a = addrx(r.ulebBig()); push(a, a + r.ulebBig()); break; } // startx_length
      case 4: { const a = r.ulebBig(); push(base + a, base + r.ulebBig()); break; } // offset_pair
      case 5: base = r.uint(u.addrSize); break; // base_address
      case 6: { const a = r.uint(u.addrSize); push(a, r.uint(u.addrSize)); break; } // start_end
      case 7: { const a = r.uint(u.addrSize); push(a, a + r.ulebBig()); break; } // start_length
      default: throw new DwarfError(`unknown range list entry ${kind}`);
    }
  }
}

/**
 * The compile and partial units of .debug_info with their root DIEs read. A
 * unit whose header or root DIE is unreadable is left out; a length that
 * cannot be trusted ends the walk, since the next unit's start is unknown.
 */
export function readUnits(s: DwarfSections): Unit[] {
  const info = s.info;
  if (!info) return [];
  const abbrevCache = new Map<number, Map<number, Abbrev>>();
  const units: Unit[] = [];
  let at = 0;
  while (at + 4 <= info.length) {
    const r = new Reader(info, at);
    let length = r.u32();
    const is64 = length === 0xffffffff;
    if (length >= 0xfffffff0 && !is64) break; // reserved lengths
    if (is64) { if (r.remaining < 8) break; length = Number(r.u64()); }
    const end = r.pos + length;
    if (!Number.isSafeInteger(end) || end > info.length || length < 2) break;
    const start = at;
    at = end;
    try {
      const version = new Reader(info, r.pos, end).u16();
      const ur = new Reader(info, r.pos + 2, end);
      let unitType = 1; let addrSize: number; let abbrevOffset: number;
      if (version >= 5) { unitType = ur.u8(); addrSize = ur.u8(); abbrevOffset = ur.offset(is64); }
      else { abbrevOffset = ur.offset(is64); addrSize = ur.u8(); }
      if (version < 2 || version > 5 || ![1, 3, 4].includes(unitType) || ![4, 8].includes(addrSize)) continue; // type units hold no code
      if (unitType === 4) ur.skip(8); // skeleton unit: dwo_id
      let abbrevs = abbrevCache.get(abbrevOffset);
      if (!abbrevs) { abbrevs = parseAbbrevs(s.abbrev, abbrevOffset); abbrevCache.set(abbrevOffset, abbrevs); }
      const u: Unit = {
        offset: start, end, dieStart: ur.pos, version, is64, addrSize, abbrevs,
        addrBase: 8, strOffsetsBase: 8, rnglistsBase: 0, baseAddr: 0n, name: null, compDir: null, stmtList: null, ranges: [],
      };
      const root = readDie(ur, u);
      if (!root) continue;
      // Bases first: the root's own strx/addrx/rnglistx values depend on them.
      const base = (attr: number) => { const a = root.attrs.get(attr); return a ? toNumber(a.v) : null; };
      u.addrBase = base(AT.addrBase) ?? (is64 ? 16 : 8);
      u.strOffsetsBase = base(AT.strOffsetsBase) ?? (is64 ? 16 : 8);
      u.rnglistsBase = base(AT.rnglistsBase) ?? (is64 ? 20 : 12);
      u.baseAddr = attrAddr(s, u, root.attrs.get(AT.lowPc)) ?? 0n;
      u.name = attrString(s, u, root.attrs.get(AT.name));
      u.compDir = attrString(s, u, root.attrs.get(AT.compDir));
      u.stmtList = base(AT.stmtList);
      try { u.ranges = dieRanges(s, u, root); } catch { u.ranges = []; }
      units.push(u);
    } catch {
      // This unit is unreadable; the others may still be fine.
    }
  }
  return units;
}
