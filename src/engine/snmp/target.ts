import dns from 'node:dns';
import net from 'node:net';
import { checkLiteral, ForbiddenAddressError, isPrivateAddress, type NetPolicy } from '../../net/policy';

/** Where to send the SNMP datagrams: one address, and the socket family that reaches it. */
export interface Target { address: string; transport: 'udp4' | 'udp6' }

/** Why a host could not become a target; `kind` picks the failure cause. */
export type TargetFailure = { kind: 'dns' | 'forbidden' | 'aborted'; message: string };

/**
 * Resolves `host` to one address under the network policy. net-snmp would
 * resolve a hostname itself on every send, past the policy, so the check
 * hands it an address it has vetted instead.
 */
export async function resolveTarget(host: string, policy: NetPolicy, signal: AbortSignal): Promise<Target | TargetFailure> {
  const literal = host.replace(/^\[|\]$/g, '');
  const family = net.isIP(literal);
  if (family !== 0) {
    try {
      checkLiteral(policy, literal);
    } catch (err) {
      return { kind: 'forbidden', message: (err as Error).message };
    }
    return { address: literal, transport: family === 6 ? 'udp6' : 'udp4' };
  }
  let addresses: dns.LookupAddress[];
  try {
    addresses = await abortable(dns.promises.lookup(host, { all: true }), signal);
  } catch (err) {
    if (signal.aborted) return { kind: 'aborted', message: `the check ran out of time resolving ${host}` };
    const code = (err as NodeJS.ErrnoException).code;
    return { kind: 'dns', message: `could not resolve ${host}${code ? ` (${code})` : ''}` };
  }
  if (addresses.length === 0) return { kind: 'dns', message: `could not resolve ${host} (no addresses)` };
  // Same rule as guardedLookup: one private address among the answers refuses
  // the host, so a name cannot smuggle a private target in beside a public one.
  if (!policy.allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) return { kind: 'forbidden', message: new ForbiddenAddressError(host, bad.address).message };
  }
  const first = addresses[0];
  return { address: first.address, transport: first.family === 6 ? 'udp6' : 'udp4' };
}

/** True when `resolveTarget` failed. */
export function isTargetFailure(t: Target | TargetFailure): t is TargetFailure {
  return 'kind' in t;
}

/** dns.lookup cannot be cancelled; this stops waiting for it when the signal fires. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}
