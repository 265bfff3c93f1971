import dgram from 'node:dgram';
import net from 'node:net';
import * as packet from 'dns-packet';

/** The records of one name. Names are compared ignoring case and a trailing dot. */
export interface ZoneEntry {
  A?: string[];
  AAAA?: string[];
  /** Followed within the zone for other query types, as a resolver would see it. */
  CNAME?: string;
  MX?: { priority: number; exchange: string }[];
  /** Each item is one record; a long string is split into 255-byte strings, an array gives the strings as they are. */
  TXT?: (string | string[])[];
  NS?: string[];
  PTR?: string[];
  SRV?: { priority: number; weight: number; port: number; target: string }[];
  CAA?: { flags?: number; tag: 'issue' | 'issuewild' | 'iodef'; value: string }[];
  SOA?: { mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number };
  /** Answer every query for this name with SERVFAIL. */
  SERVFAIL?: true;
  /** Never answer queries for this name (a timeout for the client). */
  DROP?: true;
}

/** A zone: name → records. Unknown names answer NXDOMAIN (or NODATA when a longer name exists below them). */
export type Zone = Record<string, ZoneEntry>;

/** A running test DNS server. */
export interface DnsServer {
  /** `127.0.0.1:<port>`, the form a `resolver` config takes. */
  address: string;
  port: number;
  /** The zone served; edit it freely between queries. */
  zone: Zone;
  /** Every question asked, in order (`name` lower case, `type`). */
  queries: { name: string; type: string }[];
  close(): Promise<void>;
}

const TTL = 60;
const AA = packet.AUTHORITATIVE_ANSWER;
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4 } as const;

const norm = (name: string) => name.toLowerCase().replace(/\.$/, '');

function chunks(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length ? out : [Buffer.alloc(0)];
}

function recordsOf(entry: ZoneEntry, name: string, type: string): packet.Answer[] {
  const base = { name, ttl: TTL, class: 'IN' as const };
  switch (type) {
    case 'A': return (entry.A ?? []).map((data) => ({ ...base, type: 'A', data }));
    case 'AAAA': return (entry.AAAA ?? []).map((data) => ({ ...base, type: 'AAAA', data }));
    case 'CNAME': return entry.CNAME ? [{ ...base, type: 'CNAME', data: entry.CNAME }] : [];
    case 'NS': return (entry.NS ?? []).map((data) => ({ ...base, type: 'NS', data }));
    case 'PTR': return (entry.PTR ?? []).map((data) => ({ ...base, type: 'PTR', data }));
    case 'MX': return (entry.MX ?? []).map((m) => ({ ...base, type: 'MX', data: { preference: m.priority, exchange: m.exchange } }));
    case 'TXT': return (entry.TXT ?? []).map((t) => ({ ...base, type: 'TXT', data: typeof t === 'string' ? chunks(t) : t.map((s) => Buffer.from(s)) }));
    case 'SRV': return (entry.SRV ?? []).map((s) => ({ ...base, type: 'SRV', data: s }));
    case 'CAA': return (entry.CAA ?? []).map((c) => ({ ...base, type: 'CAA', data: { flags: c.flags ?? 0, tag: c.tag, value: c.value } }));
    case 'SOA': return entry.SOA ? [{ ...base, type: 'SOA', data: entry.SOA }] : [];
    default: return [];
  }
}

/** Builds the response to one query, or null to stay silent. */
function answer(zone: Zone, query: packet.Packet, viaUdp: boolean): Buffer | null {
  const q = query.questions?.[0];
  const reply = (rcode: number, answers: packet.Answer[] = []) => {
    let buf = packet.encode({ type: 'response', id: query.id, flags: AA | rcode | ((query.flags ?? 0) & packet.RECURSION_DESIRED), questions: query.questions, answers });
    // Classic 512-byte UDP limit unless the client advertised more with EDNS: set TC and let it retry over TCP.
    const edns = (query.additionals ?? []).find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined;
    const limit = edns?.udpPayloadSize ?? 512;
    if (viaUdp && buf.length > limit) {
      buf = packet.encode({ type: 'response', id: query.id, flags: AA | packet.TRUNCATED_RESPONSE | rcode, questions: query.questions, answers: [] });
    }
    return buf;
  };
  if (!q) return reply(RCODE.NOTIMP);
  const entries = new Map(Object.entries(zone).map(([k, v]) => [norm(k), v]));
  let name = norm(q.name);
  const answers: packet.Answer[] = [];
  for (let hops = 0; hops < 8; hops++) {
    const entry = entries.get(name);
    if (!entry) {
      if (answers.length > 0) break; // a CNAME pointing out of the zone: the chain is the answer
      const below = [...entries.keys()].some((k) => k.endsWith(`.${name}`));
      return reply(below ? RCODE.NOERROR : RCODE.NXDOMAIN);
    }
    if (entry.DROP) return null;
    if (entry.SERVFAIL) return reply(RCODE.SERVFAIL);
    if (entry.CNAME && q.type !== 'CNAME') {
      answers.push(...recordsOf(entry, q.name, 'CNAME').map((r) => ({ ...r, name })));
      name = norm(entry.CNAME);
      continue;
    }
    answers.push(...recordsOf(entry, name, q.type));
    break;
  }
  return reply(RCODE.NOERROR, answers);
}

/**
 * Starts an authoritative DNS server for `zone` on 127.0.0.1, UDP and TCP on
 * the same (free) port. Point a check's `resolver` at `server.address`.
 */
export async function startDnsServer(zone: Zone): Promise<DnsServer> {
  const udp = dgram.createSocket('udp4');
  const queries: DnsServer['queries'] = [];
  const state = { zone };
  const decode = (msg: Buffer): packet.Packet | null => {
    try { return packet.decode(msg); } catch { return null; }
  };
  const note = (p: packet.Packet) => { const q = p.questions?.[0]; if (q) queries.push({ name: norm(q.name), type: q.type }); };
  udp.on('message', (msg, rinfo) => {
    const query = decode(msg);
    if (!query) return;
    note(query);
    const out = answer(state.zone, query, true);
    if (out) udp.send(out, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const port = udp.address().port;
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (data) => {
      buffered = Buffer.concat([buffered, data]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        const query = decode(buffered.subarray(2, 2 + length));
        buffered = buffered.subarray(2 + length);
        if (!query) continue;
        note(query);
        const out = answer(state.zone, query, false);
        if (!out) continue;
        const framed = Buffer.alloc(2 + out.length);
        framed.writeUInt16BE(out.length, 0);
        out.copy(framed, 2);
        socket.write(framed);
      }
    });
  });
  // TCP on the same port is best effort: only truncated answers need it.
  await new Promise<void>((resolve) => { tcp.once('error', () => resolve()); tcp.listen(port, '127.0.0.1', () => resolve()); });
  return {
    address: `127.0.0.1:${port}`,
    port,
    get zone() { return state.zone; },
    set zone(z: Zone) { state.zone = z; },
    queries,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => (tcp.listening ? tcp.close(() => resolve()) : resolve())),
      ]);
    },
  };
}
