/**
 * Parses a `tag=value; tag=value` list (DKIM, DMARC, MTA-STS and TLS-RPT TXT
 * records). Tag names are lower-cased; values are trimmed; the first
 * occurrence of a tag wins. Returns null when a part is not `tag=value`.
 */
export function parseTags(record: string): Map<string, string> | null {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    if (part.trim() === '') continue; // a trailing semicolon is allowed
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const name = part.slice(0, eq).trim().toLowerCase();
    if (!/^[a-z][a-z0-9_]*$/.test(name)) return null;
    if (!tags.has(name)) tags.set(name, part.slice(eq + 1).trim());
  }
  return tags;
}

/** True when `record` starts with `v=<version>` (the version tag must come first in all these formats). */
export function hasVersion(record: string, version: string): boolean {
  return new RegExp(`^\\s*v\\s*=\\s*${version}\\s*(;|$)`, 'i').test(record);
}

/** Records of `records` that carry `v=<version>` first. */
export function versioned(records: string[], version: string): string[] {
  return records.filter((r) => hasVersion(r, version));
}
