/**
 * The text of a PostgreSQL array (`{"a","b \"c\"",NULL,42}`) of a flat list,
 * for the `unnest($1::type[], …)` parameters of set-wise statements (the
 * analytics drain sends thousands of elements per batch). It is what the pg
 * driver makes of a JavaScript array (its arrayString), and PostgreSQL parses
 * the same text, but without the driver's generic per-element conversion:
 * strings are escaped only when they hold `"` or `\`, dates are ISO 8601 in
 * UTC, numbers and bigints bare. Elements: null/undefined, string, number,
 * bigint, boolean, Date, Buffer (bytea); anything else throws.
 */
const SPECIAL = /["\\]/;
const SPECIALS = /["\\]/g;

const quoted = (s: string): string => `"${SPECIAL.test(s) ? s.replace(SPECIALS, '\\$&') : s}"`;

export function arrayLiteral(values: readonly unknown[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'string') out += quoted(v);
    else if (typeof v === 'number' || typeof v === 'bigint') out += String(v);
    else if (typeof v === 'boolean') out += v ? 't' : 'f';
    else if (v instanceof Date) out += `"${v.toISOString()}"`;
    else if (Buffer.isBuffer(v)) out += `"\\\\x${v.toString('hex')}"`;
    else throw new TypeError(`arrayLiteral: unsupported element ${typeof v}`);
  }
  return `${out}}`;
}
