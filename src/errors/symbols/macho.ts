/**
 * Mach-O reading for iOS symbolication: the slices of a thin or fat
 * (universal) file, each with its LC_UUID, architecture, __TEXT vmaddr and
 * sections. A dSYM's DWARF file is an ordinary Mach-O (MH_DSYM) whose
 * __DWARF segment holds the debug sections; the app binary is the same format
 * without them. Pure and dependency-free; every read is bounds-checked.
 */
import { Reader, DwarfError, check } from './dwarf-reader';

/** One Mach-O slice (a fat/universal file has several). */
export interface MachOSlice {
  /** LC_UUID, lowercase dashed 8-4-4-4-12. */
  uuid: string;
  /** 'arm64', 'arm64e', 'x86_64', 'armv7', … (`cpu-<type>-<subtype>` when unknown). */
  arch: string;
  /** vmaddr of the __TEXT segment (0 when there is none). */
  textVmAddr: bigint;
}

/** A section of a slice; `data` is null when its bytes lie outside the file (a truncated upload). */
export interface MachOSection {
  segment: string;
  name: string;
  addr: bigint;
  data: Buffer | null;
}

/** A slice with what symbolication needs beyond MachOSlice. */
export interface MachOImage extends MachOSlice {
  is64: boolean;
  fileType: number;
  sections: MachOSection[];
}

const MH_MAGIC = 0xfeedface;
const MH_MAGIC_64 = 0xfeedfacf;
const MH_CIGAM = 0xcefaedfe;
const MH_CIGAM_64 = 0xcffaedfe;
const FAT_MAGIC = 0xcafebabe;
const FAT_MAGIC_64 = 0xcafebabf;
const LC_SEGMENT = 0x1;
const LC_SEGMENT_64 = 0x19;
const LC_UUID = 0x1b;
// A universal file has a handful of slices. Java class files share FAT_MAGIC,
// followed by their version (major 45 and up) where nfat_arch would be, so a
// bound below that tells them apart.
const MAX_FAT_ARCHS = 32;

const CPU_ARCH_ABI64 = 0x01000000;
const CPU_ARCH_ABI64_32 = 0x02000000;
const CPU_TYPE_X86 = 7;
const CPU_TYPE_ARM = 12;
const ARM_SUBTYPES: Record<number, string> = { 5: 'armv4t', 6: 'armv6', 7: 'armv5', 9: 'armv7', 10: 'armv7f', 11: 'armv7s', 12: 'armv7k', 13: 'armv8', 14: 'armv6m', 15: 'armv7m', 16: 'armv7em' };

/** The conventional architecture name of a cputype/cpusubtype pair. */
export function archName(cpuType: number, cpuSubtype: number): string {
  const sub = cpuSubtype & 0x00ffffff; // the top byte holds capability bits (e.g. pointer auth ABI)
  if (cpuType === (CPU_TYPE_ARM | CPU_ARCH_ABI64)) return sub === 2 ? 'arm64e' : 'arm64';
  if (cpuType === (CPU_TYPE_ARM | CPU_ARCH_ABI64_32)) return 'arm64_32';
  if (cpuType === (CPU_TYPE_X86 | CPU_ARCH_ABI64)) return sub === 8 ? 'x86_64h' : 'x86_64';
  if (cpuType === CPU_TYPE_X86) return 'i386';
  if (cpuType === CPU_TYPE_ARM) return ARM_SUBTYPES[sub] ?? 'arm';
  return `cpu-${cpuType >>> 0}-${sub}`;
}

/** A UUID in any case, with or without dashes, as lowercase 8-4-4-4-12; null when it is not 32 hex digits. */
export function normalizeUuid(uuid: string): string | null {
  const hex = uuid.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function fixedName(buf: Buffer, at: number): string {
  const raw = buf.subarray(at, at + 16);
  const nul = raw.indexOf(0);
  return raw.toString('latin1', 0, nul < 0 ? 16 : nul);
}

/** Parses the thin Mach-O occupying `buf[start, end)`; offsets in its load commands are relative to `start`. */
function parseThin(buf: Buffer, start: number, end: number): MachOImage | null {
  const r = new Reader(buf, start, end);
  const magic = r.u32();
  if (magic === MH_CIGAM || magic === MH_CIGAM_64) throw new Error('big-endian Mach-O is not supported');
  if (magic !== MH_MAGIC && magic !== MH_MAGIC_64) throw new Error('not a Mach-O file');
  const is64 = magic === MH_MAGIC_64;
  const cpuType = r.u32() | 0;
  const cpuSubtype = r.u32() | 0;
  const fileType = r.u32();
  const ncmds = r.u32();
  const sizeofcmds = r.u32();
  r.skip(is64 ? 8 : 4); // flags (+ reserved)
  check(sizeofcmds <= r.remaining, 'load commands run past the end of the file');
  const cmdsEnd = r.pos + sizeofcmds;

  let uuid: string | null = null;
  let textVmAddr = 0n;
  const sections: MachOSection[] = [];
  for (let i = 0; i < ncmds; i++) {
    const at = r.pos;
    const cmd = r.u32();
    const cmdsize = r.u32();
    // Each command is at least its 8-byte header, so the loop always advances.
    check(cmdsize >= 8 && at + cmdsize <= cmdsEnd, 'load command runs past sizeofcmds');
    const lc = new Reader(buf, at + 8, at + cmdsize);
    if (cmd === LC_UUID) {
      lc.skip(16);
      uuid = normalizeUuid(buf.toString('hex', at + 8, at + 24));
    } else if (cmd === LC_SEGMENT_64 || cmd === LC_SEGMENT) {
      const wide = cmd === LC_SEGMENT_64;
      lc.skip(16);
      const segname = fixedName(buf, at + 8);
      const vmaddr = wide ? lc.u64() : BigInt(lc.u32());
      lc.skip(wide ? 8 : 4); // vmsize
      const fileoff = wide ? lc.u64() : BigInt(lc.u32());
      const filesize = wide ? lc.u64() : BigInt(lc.u32());
      // A segment whose bytes run past the end is a truncated file (a dSYM's
      // __TEXT has filesize 0: only its addresses are kept).
      check(filesize === 0n || fileoff + filesize <= BigInt(end - start), `segment ${segname} runs past the end of the file`);
      lc.skip(8); // maxprot, initprot
      const nsects = lc.u32();
      lc.skip(4); // flags
      if (segname === '__TEXT') textVmAddr = vmaddr;
      const sectSize = wide ? 80 : 68;
      check(nsects <= lc.remaining / sectSize, 'segment sections run past the command');
      for (let s = 0; s < nsects; s++) {
        const sa = lc.pos;
        lc.skip(32);
        const addr = wide ? lc.u64() : BigInt(lc.u32());
        const size = wide ? lc.u64() : BigInt(lc.u32());
        const offset = lc.u32();
        lc.seek(sa + sectSize);
        const fileStart = start + offset;
        const inFile = offset > 0 && size <= BigInt(end - fileStart) && fileStart <= end;
        sections.push({
          segment: fixedName(buf, sa + 16),
          name: fixedName(buf, sa),
          addr,
          data: inFile ? buf.subarray(fileStart, fileStart + Number(size)) : null,
        });
      }
    }
    r.seek(at + cmdsize);
  }
  if (!uuid) return null;
  return { uuid, arch: archName(cpuType, cpuSubtype), textVmAddr, is64, fileType, sections };
}

/**
 * Every slice of a thin or fat Mach-O with its sections (slices without an
 * LC_UUID are left out: nothing could be matched to them). Throws Error on
 * anything that is not a well-formed little-endian Mach-O.
 */
export function parseMachO(buf: Buffer): MachOImage[] {
  try {
    check(buf.length >= 8, 'too short to be Mach-O');
    const magic = buf.readUInt32BE(0);
    if (magic !== FAT_MAGIC && magic !== FAT_MAGIC_64) {
      const one = parseThin(buf, 0, buf.length);
      return one ? [one] : [];
    }
    // The fat header and its fat_arch records are big-endian whatever the slices are.
    const wide = magic === FAT_MAGIC_64;
    const count = buf.readUInt32BE(4);
    check(count > 0 && count <= MAX_FAT_ARCHS, 'not a Mach-O universal file');
    const recSize = wide ? 32 : 20;
    check(8 + count * recSize <= buf.length, 'fat header runs past the end of the file');
    const out: MachOImage[] = [];
    for (let i = 0; i < count; i++) {
      const at = 8 + i * recSize;
      const offset = wide ? buf.readBigUInt64BE(at + 8) : BigInt(buf.readUInt32BE(at + 8));
      const size = wide ? buf.readBigUInt64BE(at + 16) : BigInt(buf.readUInt32BE(at + 12));
      check(offset + size <= BigInt(buf.length), 'fat slice runs past the end of the file');
      const slice = parseThin(buf, Number(offset), Number(offset + size));
      if (slice) out.push(slice);
    }
    return out;
  } catch (e) {
    if (e instanceof DwarfError) throw new Error(`not a readable Mach-O file: ${e.message}`);
    throw e;
  }
}

/** Reads a thin or fat Mach-O (a dSYM's DWARF file or an executable): its slices. Throws Error on anything that is not Mach-O. */
export function readMachO(buf: Buffer): MachOSlice[] {
  return parseMachO(buf).map(({ uuid, arch, textVmAddr }) => ({ uuid, arch, textVmAddr }));
}
