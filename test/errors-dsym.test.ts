// iOS symbolication from dSYMs (src/errors/symbols/macho.ts, dwarf.ts) on the
// real fixture in test/fixtures/symbols/ios (see its README): a fat DWARF 4
// dylib and a DWARF 5 executable built by clang 14 and linked into dSYMs by
// dsymutil. Expected lines come from the MARK comments in the fixture's
// sources; the UUIDs and addresses below are those build.sh printed and
// llvm-symbolizer / llvm-dwarfdump --lookup confirmed, so a rebuild means
// updating them.
import fs from 'node:fs';
import path from 'node:path';
import { parseMachO, readMachO } from '../src/errors/symbols/macho';
import { openDsym, symbolicate, type NativeFrame } from '../src/errors/symbols/dwarf';

const DIR = path.join(__dirname, 'fixtures/symbols/ios');
const UUID4_ARM64 = '4c4c44be-5555-3144-a1c7-c003ae5e391f';
const UUID4_X86_64 = '4c4c44b4-5555-3144-a1e2-54735aab5b21';
const UUID5_ARM64 = '4c4c44f4-5555-3144-a1c4-335042a70fd3';

const read = (rel: string) => fs.readFileSync(path.join(DIR, rel));
const dsym4 = read('libvigil4.dylib.dSYM/Contents/Resources/DWARF/libvigil4.dylib');
const dsym5 = read('vigil5.dSYM/Contents/Resources/DWARF/vigil5');

/** The 1-based line of the fixture source line holding `MARK:<marker>`. */
function mark(file: string, marker: string): number {
  const lines = read(`src/${file}`).toString('utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(`MARK:${marker} `));
  if (i < 0) throw new Error(`no MARK:${marker} in ${file}`);
  return i + 1;
}
const src = (file: string) => `/vigil/ios/src/${file}`; // build.sh maps the checkout to /vigil/ios

const frame = (fn: string, file: string, marker: string, column: number): NativeFrame => ({ function: fn, file: src(file), line: mark(file, marker), column });

describe('readMachO', () => {
  test('a fat dSYM: each slice with the UUID llvm-dwarfdump --uuid printed, its arch and __TEXT vmaddr', () => {
    expect(readMachO(dsym4)).toEqual([
      { uuid: UUID4_X86_64, arch: 'x86_64', textVmAddr: 0n },
      { uuid: UUID4_ARM64, arch: 'arm64', textVmAddr: 0n },
    ]);
    expect(readMachO(dsym5)).toEqual([{ uuid: UUID5_ARM64, arch: 'arm64', textVmAddr: 0x100000000n }]);
  });

  test('the binaries carry the same UUIDs as their dSYMs', () => {
    expect(readMachO(read('libvigil4.dylib')).map((s) => s.uuid)).toEqual([UUID4_X86_64, UUID4_ARM64]);
    expect(readMachO(read('vigil5'))).toEqual([{ uuid: UUID5_ARM64, arch: 'arm64', textVmAddr: 0x100000000n }]);
  });

  test('garbage and truncated input throw', () => {
    const javaClass = Buffer.concat([Buffer.from('cafebabe00000034', 'hex'), Buffer.alloc(4096)]); // shares FAT_MAGIC
    const fatPastEnd = Buffer.alloc(48);
    fatPastEnd.writeUInt32BE(0xcafebabe, 0); fatPastEnd.writeUInt32BE(1, 4); fatPastEnd.writeUInt32BE(4096, 16); fatPastEnd.writeUInt32BE(4096, 20);
    const truncated = [dsym5.subarray(0, 64), dsym4.subarray(0, 30), dsym5.subarray(0, dsym5.length - 500), read('vigil5').subarray(0, 20_000)];
    for (const bad of [Buffer.alloc(0), Buffer.from('not a mach-o file at all'), Buffer.alloc(4096, 0xab), javaClass, fatPastEnd, ...truncated]) {
      expect(() => readMachO(bad)).toThrow(Error);
    }
  });
});

// The arm64 code has the same layout in both builds; only __TEXT's vmaddr differs.
describe.each([
  ['DWARF 4 (fat dylib, arm64 slice)', dsym4, UUID4_ARM64, 0n],
  ['DWARF 5 (executable)', dsym5, UUID5_ARM64, 0x100000000n],
])('symbolicate, %s', (_name, buf, uuid, text) => {
  const at = (offset: number) => text + BigInt(offset);

  test('an address in a non-inlined function: its name, file, line and column', () => {
    expect(symbolicate(buf, uuid, at(0x4054))).toEqual([frame('leaf_work', 'work.c', 'leaf-loop', 35)]);
    expect(symbolicate(buf, uuid, at(0x4098))).toEqual([frame('helper_mid', 'work.c', 'mid-calls-leaf', 10)]);
    // A caller frame: return address 0x402c after `bl helper_mid`, minus one.
    expect(symbolicate(buf, uuid, at(0x402c) - 1n)).toEqual([frame('api_entry', 'app.c', 'entry-calls-mid', 10)]);
  });

  test('a unit with two address ranges (DW_AT_ranges): the second range resolves too', () => {
    expect(symbolicate(buf, uuid, at(0x40c4))).toEqual([frame('cold_path', 'work.c', 'cold-body', 22)]);
  });

  test('inlined code: one frame per function, innermost first, outer ones at the call sites', () => {
    expect(symbolicate(buf, uuid, at(0x400c))).toEqual([
      frame('scale_inline', 'scale.h', 'scale-calls-mix', 22),
      frame('api_entry', 'app.c', 'entry-calls-scale', 11),
    ]);
    expect(symbolicate(buf, uuid, at(0x4014))).toEqual([
      frame('mix_bits', 'scale.h', 'mix-body', 22),
      frame('scale_inline', 'scale.h', 'scale-calls-mix', 11),
      frame('api_entry', 'app.c', 'entry-calls-scale', 11),
    ]);
  });

  test('addresses nothing covers give []', () => {
    for (const off of [0x3ffc, 0x40b0 /* the gap before cold_path */, 0x40d8, 0x8000]) expect(symbolicate(buf, uuid, at(off))).toEqual([]);
    expect(symbolicate(buf, uuid, 0n)).toEqual([]);
  });

  test('an unknown UUID gives [] and openDsym null; the UUID may be upper case or undashed', () => {
    expect(symbolicate(buf, '00000000-0000-0000-0000-000000000000', at(0x4054))).toEqual([]);
    expect(openDsym(buf, '00000000-0000-0000-0000-000000000000')).toBeNull();
    expect(openDsym(buf, 'nonsense')).toBeNull();
    expect(symbolicate(buf, uuid.toUpperCase().replace(/-/g, ''), at(0x4054))).toEqual([frame('leaf_work', 'work.c', 'leaf-loop', 35)]);
  });
});

test('openDsym parses once for many lookups', () => {
  const image = openDsym(dsym5, UUID5_ARM64)!;
  expect(image).toMatchObject({ uuid: UUID5_ARM64, arch: 'arm64', textVmAddr: 0x100000000n });
  expect(image.lookup(0x100004054n)[0].function).toBe('leaf_work');
  expect(image.lookup(0x100004014n).map((f) => f.function)).toEqual(['mix_bits', 'scale_inline', 'api_entry']);
  expect(image.lookup(0x1000040b0n)).toEqual([]);
});

test('the x86_64 slice of the fat dSYM is chosen by its UUID', () => {
  // x86_64 code: helper_mid's call to leaf_work at 0x306, mix_bits' store at 0x2a4.
  expect(symbolicate(dsym4, UUID4_X86_64, 0x306n)).toEqual([frame('helper_mid', 'work.c', 'mid-calls-leaf', 10)]);
  expect(symbolicate(dsym4, UUID4_X86_64, 0x2a4n).map((f) => [f.function, f.line])).toEqual([
    ['mix_bits', mark('scale.h', 'mix-body')], ['scale_inline', mark('scale.h', 'scale-calls-mix')], ['api_entry', mark('app.c', 'entry-calls-scale')],
  ]);
  // The arm64 slice's address means something else in the x86_64 one.
  expect(symbolicate(dsym4, UUID4_X86_64, 0x4054n)).toEqual([]);
});

test('a fat file built around the thin DWARF 5 dSYM (FAT_MAGIC_64 and FAT_MAGIC)', () => {
  for (const wide of [true, false]) {
    const sliceAt = 0x1000; // slices are page-aligned in a universal file
    const fat = Buffer.alloc(sliceAt + dsym5.length);
    fat.writeUInt32BE(wide ? 0xcafebabf : 0xcafebabe, 0);
    fat.writeUInt32BE(1, 4);
    fat.writeUInt32BE(0x0100000c, 8); // CPU_TYPE_ARM64
    fat.writeUInt32BE(0, 12);
    if (wide) { fat.writeBigUInt64BE(BigInt(sliceAt), 16); fat.writeBigUInt64BE(BigInt(dsym5.length), 24); fat.writeUInt32BE(12, 32); }
    else { fat.writeUInt32BE(sliceAt, 16); fat.writeUInt32BE(dsym5.length, 20); fat.writeUInt32BE(12, 24); }
    dsym5.copy(fat, sliceAt);
    expect(readMachO(fat)).toEqual([{ uuid: UUID5_ARM64, arch: 'arm64', textVmAddr: 0x100000000n }]);
    expect(symbolicate(fat, UUID5_ARM64, 0x100004098n)).toEqual([frame('helper_mid', 'work.c', 'mid-calls-leaf', 10)]);
  }
});

describe('malformed input never throws from symbolicate', () => {
  test('garbage, truncated and non-DWARF Mach-O buffers give []', () => {
    for (const bad of [Buffer.alloc(0), Buffer.from('garbage'), Buffer.alloc(100_000, 0xff), dsym5.subarray(0, 200), dsym5.subarray(0, dsym5.length - 500), read('vigil5')]) {
      expect(symbolicate(bad, UUID5_ARM64, 0x100004054n)).toEqual([]);
    }
  });

  test('a wiped debug section: [] without .debug_info or .debug_abbrev, names without lines when .debug_line is gone', () => {
    const wiped = (name: string, byte: number) => {
      const buf = Buffer.from(dsym5);
      const sec = parseMachO(buf)[0].sections.find((x) => x.name === name)!;
      sec.data!.fill(byte);
      return buf;
    };
    expect(symbolicate(wiped('__debug_info', 0xff), UUID5_ARM64, 0x100004054n)).toEqual([]);
    expect(symbolicate(wiped('__debug_info', 0), UUID5_ARM64, 0x100004054n)).toEqual([]);
    expect(symbolicate(wiped('__debug_abbrev', 0), UUID5_ARM64, 0x100004054n)).toEqual([]);
    expect(symbolicate(wiped('__debug_line', 0xff), UUID5_ARM64, 0x100004014n)).toEqual([
      { function: 'mix_bits', file: null, line: null, column: null },
      { function: 'scale_inline', file: null, line: mark('scale.h', 'scale-calls-mix'), column: 11 },
      { function: 'api_entry', file: null, line: mark('app.c', 'entry-calls-scale'), column: 11 },
    ]);
  });

  test('randomly damaged and truncated DWARF sections', () => {
    // Seeded so that a failure reproduces.
    let seed = 7;
    const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
    // Damage lands in the debug sections (the load commands stay intact, or the file is merely not Mach-O).
    const debugStart = Math.min(...parseMachO(dsym5)[0].sections.filter((x) => x.segment === '__DWARF').map((x) => x.data!.byteOffset - dsym5.byteOffset));
    expect(debugStart).toBeGreaterThan(0);
    const addrs = [0x100004014n, 0x100004054n, 0x1000040c4n];
    for (let i = 0; i < 100; i++) {
      const buf = Buffer.from(dsym5);
      const hits = 1 + Math.floor(rand() * 6);
      for (let h = 0; h < hits; h++) buf[debugStart + Math.floor(rand() * (buf.length - debugStart))] = i % 2 ? 0xff : Math.floor(rand() * 256);
      const cut = i % 5 === 0 ? buf.subarray(0, debugStart + Math.floor(rand() * (buf.length - debugStart))) : buf;
      for (const a of addrs) {
        const frames = symbolicate(cut, UUID5_ARM64, a);
        expect(Array.isArray(frames)).toBe(true);
      }
    }
  });
});
