/**
 * A bounds-checked little-endian cursor over one DWARF section (or a Mach-O
 * header). Every read checks the remaining bytes and throws DwarfError past
 * the end, so a damaged or hostile upload fails one lookup instead of reading
 * neighbouring memory, looping or crashing the process. Mach-O targets that
 * carry DWARF (arm64, x86_64, armv7) are all little-endian.
 */

/** Thrown by the readers on truncated or malformed input; lookups catch it. */
export class DwarfError extends Error {
  override name = 'DwarfError';
}

/** Throws DwarfError unless `cond` holds. */
export function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new DwarfError(what);
}

/** A cursor over `buf[start, end)`; `pos` is an absolute index into `buf`. */
export class Reader {
  pos: number;
  readonly end: number;

  constructor(readonly buf: Buffer, start = 0, end = buf.length) {
    check(start >= 0 && end <= buf.length && start <= end, 'range outside the section');
    this.pos = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private take(n: number): number {
    check(Number.isSafeInteger(n) && n >= 0 && n <= this.end - this.pos, 'truncated');
    const at = this.pos;
    this.pos += n;
    return at;
  }

  skip(n: number): void {
    this.take(n);
  }

  /** Moves to an absolute position inside the reader's range. */
  seek(pos: number): void {
    check(Number.isSafeInteger(pos) && pos >= 0 && pos <= this.end, 'seek outside the section');
    this.pos = pos;
  }

  u8(): number {
    return this.buf[this.take(1)];
  }

  i8(): number {
    return this.buf.readInt8(this.take(1));
  }

  u16(): number {
    return this.buf.readUInt16LE(this.take(2));
  }

  u32(): number {
    return this.buf.readUInt32LE(this.take(4));
  }

  u64(): bigint {
    return this.buf.readBigUInt64LE(this.take(8));
  }

  /** An unsigned integer of 1, 2, 3, 4 or 8 bytes (address sizes, strx3/addrx3). */
  uint(size: number): bigint {
    switch (size) {
      case 1: return BigInt(this.u8());
      case 2: return BigInt(this.u16());
      case 3: return BigInt(this.buf.readUIntLE(this.take(3), 3));
      case 4: return BigInt(this.u32());
      case 8: return this.u64();
      default: throw new DwarfError(`unsupported integer size ${size}`);
    }
  }

  /** A 4- or 8-byte section offset, which must fit in a JavaScript number. */
  offset(is64: boolean): number {
    if (!is64) return this.u32();
    return toNumber(this.u64());
  }

  ulebBig(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.u8();
      // Past 64 bits only zero padding is meaningful; more than 10 bytes is garbage.
      check(shift < 70n, 'LEB128 too long');
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) return BigInt.asUintN(64, result);
    }
  }

  uleb(): number {
    // Fast path without bigints: up to 7 bytes (49 bits) is always a safe integer.
    const start = this.pos;
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 7; i++) {
      const b = this.u8();
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
    }
    this.pos = start;
    return toNumber(this.ulebBig());
  }

  sleb(): number {
    let result = 0n;
    let shift = 0n;
    let b: number;
    do {
      b = this.u8();
      check(shift < 70n, 'LEB128 too long');
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b & 0x80);
    if (b & 0x40) result -= 1n << shift;
    const n = Number(BigInt.asIntN(64, result));
    check(Number.isSafeInteger(n), 'SLEB128 out of range');
    return n;
  }

  /** A NUL-terminated UTF-8 string. */
  cstr(): string {
    const nul = this.buf.indexOf(0, this.pos);
    check(nul >= 0 && nul < this.end, 'unterminated string');
    const s = this.buf.toString('utf8', this.pos, nul);
    this.pos = nul + 1;
    return s;
  }
}

/** A bigint that must be a safe integer (offsets, counts, indexes). */
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
export function toNumber(v: bigint): number {
  check(v <= MAX_SAFE && v >= -MAX_SAFE, 'value too large');
  return Number(v);
}

/** The NUL-terminated string at `offset` of a string section, or null when out of range. */
export function stringAt(section: Buffer | undefined, offset: number | bigint): string | null {
  if (!section) return null;
  const at = typeof offset === 'bigint' ? (offset <= BigInt(section.length) ? Number(offset) : -1) : offset;
  if (!Number.isSafeInteger(at) || at < 0 || at >= section.length) return null;
  const nul = section.indexOf(0, at);
  return section.toString('utf8', at, nul < 0 ? section.length : nul);
}
