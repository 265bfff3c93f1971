/**
 * The DWARF line-number program (.debug_line, header versions 2–5): runs the
 * state machine into rows grouped by sequence, and finds the row covering an
 * address. Files are resolved to paths (directory + name, relative ones under
 * the unit's DW_AT_comp_dir) in the index space DW_AT_call_file uses: from 1
 * in DWARF 2–4, from 0 in DWARF 5.
 */
import { Reader, DwarfError, check, stringAt } from './dwarf-reader';
import type { DwarfSections } from './dwarf-unit';

/** One row of the line table. */
export interface LineRow { addr: bigint; file: number; line: number; column: number }

/** A unit's line table: file paths by index, and sequences of rows sorted by start address. */
export interface LineTable {
  files: (string | null)[];
  /** Each sequence's rows are in address order; its last row is the end_sequence row (an exclusive end). */
  sequences: LineRow[][];
}

function joinPath(dir: string | null, name: string): string {
  if (!dir || name.startsWith('/')) return name;
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

/** Reads a DWARF 5 directory or file entry field in one of the forms the line header allows. */
function entryField(r: Reader, s: DwarfSections, form: number, is64: boolean): string | number | null {
  switch (form) {
    case 0x08: return r.cstr(); // string
    case 0x1f: return stringAt(s.lineStr, r.offset(is64)); // line_strp
    case 0x0e: return stringAt(s.str, r.offset(is64)); // strp
    case 0x0f: return r.uleb(); // udata
    case 0x0b: return r.u8(); // data1
    case 0x05: return r.u16(); // data2
    case 0x06: return r.u32(); // data4
    case 0x07: r.skip(8); return null; // data8
    case 0x1e: r.skip(16); return null; // data16 (the MD5)
    case 0x09: r.skip(r.uleb()); return null; // block
    // strx forms would need the unit's str_offsets_base; producers use line_strp here.
    case 0x1a: r.uleb(); return null;
    case 0x25: r.skip(1); return null;
    case 0x26: r.skip(2); return null;
    case 0x27: r.skip(3); return null;
    case 0x28: r.skip(4); return null;
    default: throw new DwarfError(`unsupported line header form 0x${form.toString(16)}`);
  }
}

/** DWARF 5 directory/file tables: a format (content type, form pairs) then the entries. */
function entryTable(r: Reader, s: DwarfSections, is64: boolean): { path: string | null; dir: number }[] {
  const formatCount = r.u8();
  const format: [number, number][] = [];
  for (let i = 0; i < formatCount; i++) format.push([r.uleb(), r.uleb()]);
  const count = r.uleb();
  // Every entry takes at least one byte, so a larger count is garbage (and would loop for long).
  check(count <= r.remaining && (count === 0 || formatCount > 0), 'bad line header entry count');
  const out: { path: string | null; dir: number }[] = [];
  for (let i = 0; i < count; i++) {
    const entry = { path: null as string | null, dir: 0 };
    const before = r.pos;
    for (const [type, form] of format) {
      const v = entryField(r, s, form, is64);
      if (type === 1 && typeof v === 'string') entry.path = v; // DW_LNCT_path
      if (type === 2 && typeof v === 'number') entry.dir = v; // DW_LNCT_directory_index
    }
    check(r.pos > before, 'empty line header entry');
    out.push(entry);
  }
  return out;
}

/** Parses the line program at `offset` of .debug_line. Throws DwarfError when malformed. */
export function parseLineTable(s: DwarfSections, offset: number, compDir: string | null): LineTable {
  check(s.line, 'no .debug_line');
  const r = new Reader(s.line);
  r.seek(offset);
  let length = r.u32();
  const is64 = length === 0xffffffff;
  if (is64) length = Number(r.u64());
  else check(length < 0xfffffff0, 'reserved unit length');
  check(length <= r.remaining, 'line program runs past the section');
  const end = r.pos + length;
  const h = new Reader(s.line, r.pos, end);
  const version = h.u16();
  check(version >= 2 && version <= 5, `line table version ${version}`);
  if (version >= 5) h.skip(2); // address_size, segment_selector_size: set_address carries its own length
  const headerLength = h.offset(is64);
  const programStart = h.pos + headerLength;
  check(programStart <= end, 'line header runs past the program');
  const minInst = BigInt(h.u8());
  const maxOps = version >= 4 ? h.u8() || 1 : 1;
  h.skip(1); // default_is_stmt: is_stmt does not change which row covers an address
  const lineBase = h.i8();
  const lineRange = h.u8();
  const opcodeBase = h.u8();
  check(lineRange > 0 && opcodeBase > 0, 'bad line header');
  const opLengths: number[] = [];
  for (let i = 1; i < opcodeBase; i++) opLengths.push(h.u8());

  const files: (string | null)[] = [];
  const under = (dir: string | null) => (dir && !dir.startsWith('/') && compDir ? joinPath(compDir, dir) : dir ?? compDir);
  let defineFile: (name: string, dirIndex: number) => void;
  if (version >= 5) {
    const dirs = entryTable(h, s, is64).map((d) => d.path);
    for (const f of entryTable(h, s, is64)) files.push(f.path === null ? null : joinPath(under(dirs[f.dir] ?? null), f.path));
    defineFile = () => undefined;
  } else {
    const dirs: string[] = [];
    for (let d = h.cstr(); d !== ''; d = h.cstr()) dirs.push(d);
    defineFile = (name, dirIndex) => files.push(joinPath(under(dirIndex === 0 ? compDir : dirs[dirIndex - 1] ?? null), name));
    files.push(null); // DWARF 2–4 file numbers start at 1
    for (let name = h.cstr(); name !== ''; name = h.cstr()) {
      const dirIndex = h.uleb();
      h.uleb(); h.uleb(); // mtime, length
      defineFile(name, dirIndex);
    }
  }

  const p = new Reader(s.line, programStart, end);
  const sequences: LineRow[][] = [];
  let rows: LineRow[] = [];
  let addr = 0n; let opIndex = 0; let file = 1; let line = 1; let column = 0;
  const reset = () => { addr = 0n; opIndex = 0; file = 1; line = 1; column = 0; };
  const emit = () => rows.push({ addr, file, line, column });
  const advance = (ops: bigint) => {
    if (maxOps === 1) { addr += minInst * ops; return; }
    // VLIW: the operation index counts within an instruction of maxOps operations.
    const total = BigInt(opIndex) + ops;
    addr += minInst * (total / BigInt(maxOps));
    opIndex = Number(total % BigInt(maxOps));
  };
  while (p.remaining > 0) {
    const op = p.u8();
    if (op >= opcodeBase) { // special opcode: advance address and line, emit a row
      const adjusted = op - opcodeBase;
      advance(BigInt(Math.floor(adjusted / lineRange)));
      line += lineBase + (adjusted % lineRange);
      emit();
      continue;
    }
    switch (op) {
      case 0: { // extended opcode
        const len = p.uleb();
        check(len <= p.remaining, 'extended opcode runs past the program');
        const next = p.pos + len;
        if (len > 0) {
          const sub = p.u8();
          if (sub === 1) { // end_sequence
            emit();
            if (rows.length > 1) sequences.push(rows);
            rows = [];
            reset();
          } else if (sub === 2) { // set_address
            const size = len - 1;
            addr = [1, 2, 4, 8].includes(size) ? p.uint(size) : (p.skip(size), addr);
            opIndex = 0;
          } else if (sub === 3 && version < 5) { // define_file
            const name = p.cstr();
            const dirIndex = p.uleb();
            defineFile(name, dirIndex);
          }
        }
        p.seek(next);
        break;
      }
      case 1: emit(); break; // copy
      case 2: advance(p.ulebBig()); break; // advance_pc
      case 3: line += p.sleb(); break; // advance_line
      case 4: file = p.uleb(); break; // set_file
      case 5: column = p.uleb(); break; // set_column
      case 6: case 7: case 10: case 11: break; // negate_stmt, basic_block, prologue_end, epilogue_begin
      case 8: advance(BigInt(Math.floor((255 - opcodeBase) / lineRange))); break; // const_add_pc
      case 9: addr += BigInt(p.u16()); opIndex = 0; break; // fixed_advance_pc
      default: // set_isa (12) and opcodes this reader does not know: skip their ULEB operands
        for (let i = 0; i < (opLengths[op - 1] ?? 0); i++) p.ulebBig();
    }
  }
  sequences.sort((a, b) => (a[0].addr < b[0].addr ? -1 : a[0].addr > b[0].addr ? 1 : 0));
  return { files, sequences };
}

/** The row covering `addr`: the last row at or before it in a sequence that ends after it. */
export function lookupLine(table: LineTable, addr: bigint): LineRow | null {
  for (const seq of table.sequences) {
    if (addr < seq[0].addr) break; // sorted by start: no later sequence starts before addr
    if (addr >= seq[seq.length - 1].addr) continue;
    let lo = 0; let hi = seq.length - 1; // invariant: seq[lo].addr <= addr < seq[hi].addr
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (seq[mid].addr <= addr) lo = mid; else hi = mid;
    }
    return seq[lo];
  }
  return null;
}
