/** A small seeded generator (mulberry32) and the choices a randomised test makes with it. */
export class Rng {
  private a: number;
  constructor(readonly seed: number) { this.a = seed >>> 0; }

  /** A float in [0, 1). */
  next(): number {
    this.a = (this.a + 0x6d2b79f5) | 0;
    let t = Math.imul(this.a ^ (this.a >>> 15), 1 | this.a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number { return Math.floor(this.next() * n); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(xs: readonly T[]): T {
    if (!xs.length) throw new Error('pick from an empty list');
    return xs[this.int(xs.length)];
  }
  /** One key of `weights`, with probability proportional to its weight (zero weights never). */
  weighted<K extends string>(weights: Partial<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((a, [, w]) => a + w, 0);
    let x = this.next() * total;
    for (const [k, w] of entries) { if ((x -= w) < 0) return k; }
    return entries[entries.length - 1][0];
  }
  shuffle<T>(xs: readonly T[]): T[] {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) { const j = this.int(i + 1); [out[i], out[j]] = [out[j], out[i]]; }
    return out;
  }
  /** `n` characters of the ids' alphabet (lower-case Crockford base32). */
  base32(n: number): string {
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(32)];
    return s;
  }
}
