import dns from 'node:dns';
import fs from 'node:fs';
import net, { type LookupFunction } from 'node:net';
import type { Config } from '../config';

/**
 * The outbound network policy every connection Vigil makes to other hosts
 * goes through: checks (engine), alert deliveries (alerting), custom-domain
 * checks and subscriber webhooks (status pages), private probes. A room of its
 * own below them all, so none of them imports another's for it.
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
// ::/96 holds the unspecified address, loopback and the deprecated IPv4-compatible
// forms (::127.0.0.1); 64:ff9b::/96 and 64:ff9b:1::/48 are NAT64 prefixes, which
// would carry an IPv4 address (a private one included) past the IPv4 list.
for (const [addr, prefix] of [['::', 96], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['64:ff9b:1::', 48]] as [string, number][]) {
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

/**
 * The policy of targets that anonymous visitors name (status-page subscriber
 * webhooks): public addresses only, whatever CHECKS_ALLOW_PRIVATE says, since
 * that setting is the operator's trust in its own monitors and must not reach
 * strangers; and Node's CA bundle only, since the operator's extra CAs vouch
 * for its own services, not for a visitor's. Frozen, so no caller can relax it.
 */
export const STRICT_POLICY: Readonly<NetPolicy> = Object.freeze({ allowPrivate: false, extraCa: Object.freeze([]) as unknown as string[] });

/**
 * Every address of `hostname` as a connection would see them, or the refusal:
 * one forbidden address among the answers refuses the name (a connection may
 * pick any of them). The one place names meet the policy.
 */
function lookupAllowed(policy: NetPolicy, hostname: string, options: dns.LookupOptions, callback: (err: Error | null, list?: dns.LookupAddress[]) => void): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err);
    const list = addresses as dns.LookupAddress[];
    if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND', hostname }));
    if (!policy.allowPrivate) {
      const bad = list.find((a) => isPrivateAddress(a.address));
      if (bad) return callback(new ForbiddenAddressError(hostname, bad.address));
    }
    callback(null, list);
  });
}

/** A `lookup` for http/net/tls that refuses non-public addresses when the policy says so (redirects included, as each hop looks up again). */
export function guardedLookup(policy: NetPolicy): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void) => {
    lookupAllowed(policy, hostname, options, (err, list) => {
      if (err) return callback(err);
      if (options.all) return callback(null, list);
      const first = list![0];
      callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}

/**
 * Resolves `host` (a name, or an IP literal with or without brackets) as a
 * connection under `policy` would, without connecting, and rejects when that
 * connection would be refused: ForbiddenAddressError, the resolver's own error
 * (the name does not resolve), or a timeout after `timeoutMs`. For refusing a
 * target when it is named; the connection checks again when it is made.
 */
export function checkHost(policy: NetPolicy, host: string, timeoutMs = 5000): Promise<void> {
  const name = host.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    // getaddrinfo cannot be cancelled: the timer only stops waiting for it.
    const timer = setTimeout(() => reject(Object.assign(new Error(`lookup of ${name} timed out`), { code: 'ETIMEOUT', hostname: name })), timeoutMs);
    lookupAllowed(policy, name, {}, (err) => {
      clearTimeout(timer);
      if (err) reject(err); else resolve();
    });
  });
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
