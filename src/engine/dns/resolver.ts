import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import { checkLiteral, ForbiddenAddressError, isPrivateAddress, type NetPolicy } from '../../net/policy';

/**
 * The `resolver` config field: an IPv4 address, `ip:port`, an IPv6 address, or
 * `[ipv6]:port`. Checked again at run time (`parseResolver`), this only keeps
 * obvious typos out at create time.
 */
export const resolverSchema = {
  type: ['string', 'null'],
  maxLength: 60,
  pattern: '^(\\d{1,3}(\\.\\d{1,3}){3}(:\\d{1,5})?|\\[[0-9A-Fa-f:.]+\\](:\\d{1,5})?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$',
  description: 'IP address of the resolver, optionally with a port (`192.0.2.53`, `192.0.2.53:5353`, `2001:db8::53`, `[2001:db8::53]:5353`); null = the service resolvers',
  default: null,
} as const;

/** A resolver address from the config, split and re-joined in the form `Resolver#setServers` takes. */
export interface ResolverAddress { host: string; port: number; server: string }

/** Parses a `resolver` config value; throws a plain Error naming the problem. */
export function parseResolver(spec: string): ResolverAddress {
  const text = spec.trim();
  let host = text;
  let port = 53;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const v4port = /^([\d.]+):(\d+)$/.exec(text);
  if (bracketed) { host = bracketed[1]; if (bracketed[2]) port = Number(bracketed[2]); }
  else if (v4port) { host = v4port[1]; port = Number(v4port[2]); }
  const family = net.isIP(host);
  if (family === 0 || !Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`resolver ${spec} is not an IP address with an optional port`);
  const server = family === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  return { host, port, server };
}

/** How a failed query failed, in DNS terms. */
export type DnsErrorKind = 'nxdomain' | 'nodata' | 'servfail' | 'refused' | 'timeout' | 'forbidden' | 'other';

/** Classifies an error of `dns.promises.Resolver` (or of the policy). */
export function dnsErrorKind(err: unknown): DnsErrorKind {
  if (err instanceof ForbiddenAddressError) return 'forbidden';
  const code = (err as { code?: string } | null)?.code;
  switch (code) {
    case 'ENOTFOUND': return 'nxdomain';
    case 'ENODATA': return 'nodata';
    case 'ESERVFAIL': return 'servfail';
    case 'EREFUSED': case 'ECONNREFUSED': return 'refused';
    case 'ETIMEOUT': case 'ECANCELLED': return 'timeout';
    default: return 'other';
  }
}

/** A short description of a failed query: "NXDOMAIN for x.example (TXT)". */
export function describeDnsError(err: unknown, name: string, type: string): string {
  switch (dnsErrorKind(err)) {
    case 'nxdomain': return `${name} does not exist (NXDOMAIN)`;
    case 'nodata': return `no ${type} records for ${name}`;
    case 'servfail': return `SERVFAIL resolving ${name} (${type})`;
    case 'refused': return `the resolver refused the query for ${name} (${type})`;
    case 'timeout': return `DNS query for ${name} (${type}) timed out`;
    case 'forbidden': return (err as Error).message;
    default: return `DNS query for ${name} (${type}) failed: ${(err as Error)?.message ?? String(err)}`;
  }
}

/** True for errors meaning "there is no such record", as opposed to "we could not find out". */
export function isAbsence(err: unknown): boolean {
  const kind = dnsErrorKind(err);
  return kind === 'nxdomain' || kind === 'nodata';
}

/** Per-query timeout and tries; c-ares doubles the timeout on each retry, so two tries stay under ~8 s. */
const QUERY_TIMEOUT_MS = 2500;
const QUERY_TRIES = 2;

/**
 * One check's view of DNS: the configured resolver (or the system's), with
 * queries cancelled when the check's signal aborts. A configured resolver is
 * a destination like any other, so the private-address policy applies to it.
 */
export class CheckResolver {
  private readonly resolver: dns.promises.Resolver;

  /** Throws ForbiddenAddressError or a plain Error for a bad `spec`. */
  constructor(spec: string | null | undefined, policy: NetPolicy, signal: AbortSignal) {
    this.resolver = new dns.promises.Resolver({ timeout: QUERY_TIMEOUT_MS, tries: QUERY_TRIES });
    if (spec) {
      const address = parseResolver(spec);
      checkLiteral(policy, address.host);
      this.resolver.setServers([address.server]);
    }
    if (signal.aborted) this.resolver.cancel();
    else signal.addEventListener('abort', () => this.resolver.cancel(), { once: true });
  }

  /** The underlying resolver (every `resolveX` method). */
  get raw(): dns.promises.Resolver { return this.resolver; }

  /** TXT records of `name`, each record's strings joined; [] when there are none (NXDOMAIN or NODATA). */
  async txt(name: string): Promise<string[]> {
    try {
      return (await this.resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (e) {
      if (isAbsence(e)) return [];
      throw e;
    }
  }

  /** IPv4 and IPv6 addresses of `name`; a family that is absent is []; other failures throw. */
  async addresses(name: string): Promise<{ v4: string[]; v6: string[] }> {
    const one = (p: Promise<string[]>) => p.catch((e) => { if (isAbsence(e)) return [] as string[]; throw e; });
    const [v4, v6] = await Promise.all([one(this.resolver.resolve4(name)), one(this.resolver.resolve6(name))]);
    return { v4, v6 };
  }

  /**
   * A `lookup` for http/https/tls that resolves through this resolver and
   * applies the private-address policy, so a fetch made on behalf of a check
   * reaches the addresses the check's own DNS sees.
   */
  lookup(policy: NetPolicy): LookupFunction {
    return ((hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void) => {
      this.addresses(hostname).then(({ v4, v6 }) => {
        const list = [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))]
          .filter((a) => !options.family || a.family === options.family);
        if (list.length === 0) return callback(Object.assign(new Error(`could not resolve ${hostname}`), { code: 'ENOTFOUND', hostname }));
        if (!policy.allowPrivate) {
          const bad = list.find((a) => isPrivateAddress(a.address));
          if (bad) return callback(new ForbiddenAddressError(hostname, bad.address));
        }
        if (options.all) return callback(null, list);
        callback(null, list[0].address, list[0].family);
      }, (err) => callback(err));
    }) as LookupFunction;
  }
}
