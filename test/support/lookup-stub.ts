import dns from 'node:dns';

/** A stand-in for the system resolver, for names under one suffix. */
export interface LookupStub {
  /** Name (lower case) → its addresses; a name not listed does not resolve (ENOTFOUND). Edit freely. */
  zone: Map<string, string[]>;
  /** Every name under the suffix looked up, in order. */
  asked: string[];
  restore(): void;
}

/**
 * Answers `dns.lookup` for names ending in `suffix` from a zone of its own
 * and passes every other name to the real lookup. Vigil resolves the hosts it
 * connects to with dns.lookup (getaddrinfo, which the test DNS server cannot
 * answer for), and a test server runs in the test's process, so this is how a
 * test gives a made-up name an address. Names under the suffix never reach a
 * real resolver.
 */
export function stubLookup(suffix: string): LookupStub {
  const zone = new Map<string, string[]>();
  const asked: string[] = [];
  const real = dns.lookup;
  const spy = jest.spyOn(dns, 'lookup').mockImplementation(((hostname: string, options: unknown, callback?: unknown) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (!name.endsWith(suffix)) return (real as (...args: unknown[]) => void)(hostname, options, callback);
    asked.push(name);
    const cb = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const all = typeof options === 'object' && options !== null && (options as dns.LookupOptions).all;
    const list = (zone.get(name) ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    process.nextTick(() => {
      if (list.length === 0) return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }));
      if (all) return cb(null, list);
      cb(null, list[0].address, list[0].family);
    });
  }) as typeof dns.lookup);
  return { zone, asked, restore: () => spy.mockRestore() };
}
