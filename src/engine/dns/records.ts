import type dns from 'node:dns';

/** Record types the dns kind queries. */
export type RecordType = 'A' | 'AAAA' | 'CNAME' | 'MX' | 'NS' | 'TXT' | 'SRV' | 'CAA' | 'PTR' | 'SOA';

/**
 * One answer as people write it (`10 mail.example.com`), plus shorter forms an
 * `expected` value may use instead (`mail.example.com` for an MX).
 */
export interface Answer { text: string; alternates: string[] }

/**
 * Normalizes a value for comparison: case, quotes, runs of spaces and a
 * trailing dot on each word do not matter (`"Mail.Example.com."` equals
 * `mail.example.com`); IPv6 addresses compare in their canonical form.
 */
export function normalizeValue(value: string): string {
  return value.replace(/"/g, '').trim().split(/\s+/)
    .map((word) => canonicalIp(word.replace(/\.$/, '').toLowerCase()))
    .join(' ');
}

// The WHATWG URL parser prints IPv6 hosts compressed and lower case: a canonical form for free.
function canonicalIp(word: string): string {
  if (!word.includes(':') || !/^[0-9a-f:.]+$/.test(word)) return word;
  try { return new URL(`http://[${word}]/`).hostname.slice(1, -1); } catch { return word; }
}

/** True when `expected` (as configured) is one of `answers`. */
export function answersInclude(answers: Answer[], expected: string): boolean {
  const want = normalizeValue(expected);
  return answers.some((a) => normalizeValue(a.text) === want || a.alternates.some((alt) => normalizeValue(alt) === want));
}

/** Queries `name` for `type` and renders the answers; throws the resolver's error. */
export async function queryAnswers(resolver: dns.promises.Resolver, name: string, type: RecordType): Promise<Answer[]> {
  const plain = (values: string[]) => values.map((text) => ({ text, alternates: [] }));
  switch (type) {
    case 'A': return plain(await resolver.resolve4(name));
    case 'AAAA': return plain(await resolver.resolve6(name));
    case 'CNAME': return plain(await resolver.resolveCname(name));
    case 'NS': return plain(await resolver.resolveNs(name));
    case 'PTR': return plain(await resolver.resolvePtr(name));
    case 'TXT': return plain((await resolver.resolveTxt(name)).map((chunks) => chunks.join('')));
    case 'MX':
      return (await resolver.resolveMx(name)).sort((a, b) => a.priority - b.priority)
        .map((mx) => ({ text: `${mx.priority} ${mx.exchange || '.'}`, alternates: [mx.exchange || '.'] }));
    case 'SRV':
      return (await resolver.resolveSrv(name)).sort((a, b) => a.priority - b.priority)
        .map((s) => ({ text: `${s.priority} ${s.weight} ${s.port} ${s.name}`, alternates: [s.name, `${s.name}:${s.port}`] }));
    case 'CAA':
      return (await resolver.resolveCaa(name)).map((record) => {
        // Node puts the value under a property named after the tag.
        const r = record as unknown as Record<string, unknown>;
        const tag = (['issue', 'issuewild', 'iodef', 'contactemail', 'contactphone'] as const).find((t) => typeof r[t] === 'string') ?? 'issue';
        const value = String(r[tag] ?? '');
        return { text: `${record.critical} ${tag} "${value}"`, alternates: [`${tag} ${value}`, value] };
      });
    case 'SOA': {
      const s = await resolver.resolveSoa(name);
      return [{ text: `${s.nsname} ${s.hostmaster} ${s.serial} ${s.refresh} ${s.retry} ${s.expire} ${s.minttl}`, alternates: [s.nsname] }];
    }
  }
}
