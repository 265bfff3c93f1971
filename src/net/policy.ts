import dns from 'node:dns';
import fs from 'node:fs';
import net, { type LookupFunction } from 'node:net';
import type { Config } from '../config';

/**
 * The outbound network policy every connection Vigil makes to other hosts
 * goes through: checks (engine), alert deliveries (alerting), custom-domain
 * checks (status pages), private probes. A room of its own below them all,
 * so none of them imports another's for it.
 */
export interface NetPolicy {
  /** May checks reach loopback, private, link-local and other non-public addresses? Default true (self-hosted). */
  allowPrivate: boolean;
  /** Extra trusted CA certificates (PEM) on top of Node's bundle. */
  extraCa: string[];
}

const V4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const blockList = new net.BlockList();
for (const [addr, prefix] of V4_BLOCKED) blockList.addSubnet(addr, prefix, 'ipv4');
for (const [addr, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as [string, number][]) {
  blockList.addSubnet(addr, prefix, 'ipv6');
}

/** True for loopback, private, link-local, CGNAT, multicast and reserved addresses. */
export function isPrivateAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 0) return false;
  // BlockList also matches IPv4-mapped IPv6 forms (::ffff:127.0.0.1 and ::ffff:7f00:1).
  return blockList.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** The error a check reports when the policy forbids an address. */
export class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDEN_ADDRESS';
  constructor(host: string, ip: string) { super(`${host} resolves to ${ip}, a private address this server may not reach`); }
}

/** A `lookup` for http/net/tls that refuses non-public addresses when the policy says so (redirects included, as each hop looks up again). */
export function guardedLookup(policy: NetPolicy): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      const list = addresses as dns.LookupAddress[];
      if (!policy.allowPrivate) {
        const bad = list.find((a) => isPrivateAddress(a.address));
        if (bad) return callback(new ForbiddenAddressError(hostname, bad.address));
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}

/** Refuses a literal IP target the policy forbids (a lookup is not consulted for literals). */
export function checkLiteral(policy: NetPolicy, host: string): void {
  if (!policy.allowPrivate && isPrivateAddress(host.replace(/^\[|\]$/g, ''))) throw new ForbiddenAddressError(host, host);
}

/** The checks' network policy from the configuration (extra CA files read once). */
export function netPolicyFrom(config: Config): NetPolicy {
  return {
    allowPrivate: config.checksAllowPrivate,
    extraCa: config.checksExtraCaFiles.map((f) => fs.readFileSync(f, 'utf8')),
  };
}
