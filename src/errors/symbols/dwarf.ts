/**
 * iOS native symbolication from a dSYM: maps an address of an image (by its
 * LC_UUID) to function, file, line and column, expanding inlined functions
 * into one frame each, innermost first. Pure and dependency-free.
 *
 * Work is lazy so that large dSYMs stay cheap: opening reads only the unit
 * headers and root DIEs (for their address ranges); a unit's DIE tree and
 * line program are parsed the first time an address falls in it, then kept.
 */
import { parseMachO, normalizeUuid, type MachOImage } from './macho';
import { Reader, check } from './dwarf-reader';
import { AT, TAG, attrRef, attrString, attrUint, dieRanges, readDie, readUnits, type Die, type DwarfSections, type Range, type Unit } from './dwarf-unit';
import { lookupLine, parseLineTable, type LineRow, type LineTable } from './dwarf-line';

/** A frame symbolicated: innermost first when inlined functions are involved. */
export interface NativeFrame { function: string | null; file: string | null; line: number | null; column: number | null }

/** An opened dSYM slice: look up many addresses without re-parsing. */
export interface DsymImage {
  uuid: string;
  arch: string;
  textVmAddr: bigint;
  /** Frames for an address in the image's own address space (see symbolicate); [] when nothing covers it. Never throws. */
  lookup(vmAddr: bigint): NativeFrame[];
}

/** A subprogram or inlined subroutine with code, and the inlined subroutines within it. */
interface FnNode { die: number; ranges: Range[]; children: FnNode[]; callFile: number | null; callLine: number | null; callColumn: number | null }
interface UnitData { functions: FnNode[]; lines: LineTable | null }

// Mach-O section names are at most 16 characters: __debug_str_offsets is stored as __debug_str_offs.
const SECTIONS: Record<string, keyof DwarfSections> = {
  __debug_info: 'info', __debug_abbrev: 'abbrev', __debug_line: 'line', __debug_str: 'str', __debug_line_str: 'lineStr',
  __debug_str_offs: 'strOffsets', __debug_addr: 'addr', __debug_ranges: 'ranges', __debug_rnglists: 'rnglists',
};
const MAX_DEPTH = 4096; // DIE nesting; real trees are a few dozen deep
const MAX_NAME_HOPS = 16; // abstract_origin/specification links followed for a name

const covers = (ranges: Range[], addr: bigint) => ranges.some(([a, b]) => addr >= a && addr < b);
const positive = (n: number | null) => (n !== null && n > 0 ? n : null);

class Dsym {
  private readonly units: Unit[];
  private readonly data = new Map<number, UnitData | null>();
  private readonly names = new Map<number, string | null>();

  constructor(private readonly s: DwarfSections) {
    this.units = readUnits(s).sort((a, b) => a.offset - b.offset);
  }

  lookup(addr: bigint): NativeFrame[] {
    // Units whose root DIE gives no ranges are tried last: their extent is unknown until parsed.
    const candidates = [...this.units.filter((u) => covers(u.ranges, addr)), ...this.units.filter((u) => u.ranges.length === 0)];
    for (const u of candidates) {
      try {
        const frames = this.lookupInUnit(u, addr);
        if (frames.length) return frames;
      } catch {
        // Malformed DWARF in this unit: it contributes nothing.
      }
    }
    return [];
  }

  private lookupInUnit(u: Unit, addr: bigint): NativeFrame[] {
    const data = this.unitData(u);
    if (!data) return [];
    const chain: FnNode[] = [];
    for (let list = data.functions; ;) {
      const hit = list.find((n) => covers(n.ranges, addr));
      if (!hit) break;
      chain.push(hit);
      list = hit.children;
    }
    const row = data.lines ? lookupLine(data.lines, addr) : null;
    const file = (index: number | null) => (index === null || !data.lines ? null : data.lines.files[index] ?? null);
    const rowFrame = (r: LineRow | null) => (r ? { file: file(r.file), line: positive(r.line), column: positive(r.column) } : { file: null, line: null, column: null });
    if (!chain.length) return row ? [{ function: null, ...rowFrame(row) }] : [];
    // The innermost frame's location is the line table's; each outer frame is
    // at the call site of the inlined function one level in.
    const frames: NativeFrame[] = [];
    for (let i = chain.length - 1; i >= 0; i--) {
      const inner = chain[i + 1];
      const loc = inner ? { file: file(inner.callFile), line: positive(inner.callLine), column: positive(inner.callColumn) } : rowFrame(row);
      frames.push({ function: this.nameOf(chain[i].die), ...loc });
    }
    return frames;
  }

  /** The unit's function tree and line table, parsed once; null when the unit is unreadable. */
  private unitData(u: Unit): UnitData | null {
    if (this.data.has(u.offset)) return this.data.get(u.offset)!;
    let data: UnitData | null = null;
    try {
      data = { functions: this.functionTree(u), lines: this.lineTable(u) };
    } finally {
      this.data.set(u.offset, data);
    }
    return data;
  }

  private lineTable(u: Unit): LineTable | null {
    if (u.stmtList === null || !this.s.line) return null;
    try {
      return parseLineTable(this.s, u.stmtList, u.compDir);
    } catch {
      return null; // functions can still be named without lines
    }
  }

  private functionTree(u: Unit): FnNode[] {
    const top: FnNode[] = [];
    const stack: FnNode[][] = [];
    let current = top;
    const r = new Reader(this.s.info!, u.dieStart, u.end);
    // A DIE that cannot be read (an unknown form, a bad abbreviation code)
    // ends the walk, as nothing after it can be located; what came before stays.
    for (;;) {
      let die: Die | null;
      try {
        if (r.remaining <= 0) break;
        die = readDie(r, u);
      } catch {
        break;
      }
      if (!die) {
        if (!stack.length) break; // padding after the unit's tree
        current = stack.pop()!;
        continue;
      }
      let children = current;
      if (die.tag === TAG.subprogram || die.tag === TAG.inlinedSubroutine) {
        let ranges: Range[] = [];
        try {
          ranges = dieRanges(this.s, u, die);
        } catch {
          // A broken range list hides this one function (its inlined children fall to its parent), not the unit.
        }
        if (ranges.length) {
          const node: FnNode = {
            die: die.offset, ranges, children: [],
            callFile: attrUint(die.attrs.get(AT.callFile)), callLine: attrUint(die.attrs.get(AT.callLine)), callColumn: attrUint(die.attrs.get(AT.callColumn)),
          };
          // A concrete subprogram nested in another's tree (a local class's method) is not inlined into it.
          (die.tag === TAG.subprogram ? top : current).push(node);
          children = node.children;
        }
      }
      if (die.hasChildren) {
        check(stack.length < MAX_DEPTH, 'DIE tree too deep');
        stack.push(current);
        current = children;
      }
    }
    return top;
  }

  /** The unit containing a .debug_info offset. */
  private unitAt(offset: number): Unit | null {
    let lo = 0; let hi = this.units.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const u = this.units[mid];
      if (offset < u.offset) hi = mid - 1;
      else if (offset >= u.end) lo = mid + 1;
      else return u;
    }
    return null;
  }

  /**
   * A function's name: the linkage (mangled) name when the DWARF has one, as
   * it is exact and can be demangled later, else DW_AT_name; both may live on
   * the abstract origin (inlined and out-of-line instances) or on the
   * declaration named by DW_AT_specification (C++ methods).
   */
  private nameOf(offset: number): string | null {
    if (this.names.has(offset)) return this.names.get(offset)!;
    let linkage: string | null = null;
    let name: string | null = null;
    const seen = new Set<number>();
    try {
      for (let at: number | null = offset; at !== null && !linkage && !seen.has(at) && seen.size < MAX_NAME_HOPS;) {
        seen.add(at);
        const u = this.unitAt(at);
        const die: Die | null = u ? readDie(new Reader(this.s.info!, at, u.end), u) : null;
        if (!u || !die) break;
        linkage = attrString(this.s, u, die.attrs.get(AT.linkageName)) ?? attrString(this.s, u, die.attrs.get(AT.mipsLinkageName));
        name ??= attrString(this.s, u, die.attrs.get(AT.name));
        at = attrRef(u, die.attrs.get(AT.abstractOrigin)) ?? attrRef(u, die.attrs.get(AT.specification));
      }
    } catch {
      // A broken reference: keep whatever name was found before it.
    }
    const result = linkage || name || null;
    this.names.set(offset, result);
    return result;
  }
}

function sectionsOf(image: MachOImage): DwarfSections {
  const s: DwarfSections = {};
  for (const sec of image.sections) {
    const key = SECTIONS[sec.name];
    if (key && sec.segment === '__DWARF' && sec.data) s[key] = sec.data;
  }
  return s;
}

/**
 * Opens the slice of the dSYM `buf` (thin or fat Mach-O) whose LC_UUID is
 * `uuid` (any case, dashes optional), for many lookups. Null when `buf` is
 * not Mach-O or has no slice with that UUID. Never throws.
 */
export function openDsym(buf: Buffer, uuid: string): DsymImage | null {
  const want = normalizeUuid(uuid);
  if (!want) return null;
  let image: MachOImage | undefined;
  try {
    image = parseMachO(buf).find((i) => i.uuid === want);
  } catch {
    return null;
  }
  if (!image) return null;
  let dsym: Dsym | null = null;
  try {
    dsym = new Dsym(sectionsOf(image));
  } catch {
    dsym = null; // unreadable DWARF: the image is there, but nothing can be symbolicated
  }
  return {
    uuid: image.uuid, arch: image.arch, textVmAddr: image.textVmAddr,
    lookup: (vmAddr) => {
      try {
        return dsym ? dsym.lookup(vmAddr) : [];
      } catch {
        return [];
      }
    },
  };
}

/**
 * Symbolicates an address of the image whose LC_UUID is `uuid` inside the dSYM `buf`.
 * `vmAddr` is the address in the image's own address space (i.e. instruction_addr − image_addr + textVmAddr);
 * for a caller frame (a return address) pass one less, so that the call instruction is looked up.
 * Returns [] when nothing covers the address. Never throws on malformed DWARF: returns [].
 */
export function symbolicate(buf: Buffer, uuid: string, vmAddr: bigint): NativeFrame[] {
  return openDsym(buf, uuid)?.lookup(vmAddr) ?? [];
}
