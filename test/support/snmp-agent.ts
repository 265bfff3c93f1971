import dgram from 'node:dgram';
import * as snmp from 'net-snmp';

/** One scalar the agent serves at `${oid}.0`. */
export interface Scalar { name: string; oid: string; type: number; value: unknown }

/** What the test agent accepts and serves. */
export interface AgentSetup { communities?: string[]; users?: snmp.User[]; scalars: Scalar[] }

/** A running agent on 127.0.0.1; `close()` frees its socket. */
export interface TestAgent { port: number; close(): Promise<void>; errors: Error[] }

/** A Counter64 value as net-snmp's agent wants it: 8 big-endian bytes. */
export function counter64(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
}

/**
 * Starts net-snmp's own agent on a free UDP port of 127.0.0.1. net-snmp turns
 * port 0 into 161, so a free port is probed first and the bind retried if
 * something took it in between.
 */
export async function startAgent(setup: AgentSetup): Promise<TestAgent> {
  for (let attempt = 0; ; attempt++) {
    const port = await freeUdpPort();
    const errors: Error[] = [];
    // The callback hears requests it refuses (unknown community, bad digest): kept for assertions.
    const agent = snmp.createAgent({ port, address: '127.0.0.1', accessControlModelType: snmp.AccessControlModelType.None }, (err) => {
      if (err) errors.push(err);
    });
    const socket = Object.values(agent.listener.sockets)[0];
    const bound = await new Promise<boolean>((resolve) => {
      socket.once('listening', () => resolve(true));
      socket.once('error', () => resolve(false));
    });
    if (!bound) {
      try { agent.close(); } catch { /* never bound */ }
      if (attempt < 5) continue;
      throw new Error('could not bind a test SNMP agent');
    }
    const mib = agent.getMib();
    for (const s of setup.scalars) {
      mib.registerProvider({ name: s.name, type: snmp.MibProviderType.Scalar, oid: s.oid, scalarType: s.type, maxAccess: snmp.MaxAccess['read-only'] });
      mib.setScalarValue(s.name, s.value);
    }
    const auth = agent.getAuthorizer();
    for (const c of setup.communities ?? []) auth.addCommunity(c);
    for (const u of setup.users ?? []) auth.addUser(u);
    return { port, errors, close: () => new Promise<void>((resolve) => agent.close(() => resolve())) };
  }
}

function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    s.once('error', reject);
    s.bind(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
