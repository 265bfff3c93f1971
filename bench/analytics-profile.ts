/**
 * Where the Vigil process's time went during the analytics ingestion load
 * (bench/analytics.ts part a, with BENCH_CPU_PROF): a V8 CPU profile summed
 * into the pieces of the ingestion path and the drain running beside it.
 * Each sample goes to the innermost frame of its stack that belongs to a
 * known piece (so HMAC under visitor.ts is the visitor hash, JSON.parse under
 * event.ts is event parsing, pg's socket writes are the pg driver); the
 * generic pieces (HTTP parsing, sockets, promises) only when no frame of the
 * stack is known. The drain's statements run asynchronously, so its piece is
 * its own JavaScript (sessions, roll-up deltas, arrays for unnest); their
 * round trips are in the pg driver's piece. Also usable alone:
 * `npx tsx bench/analytics-profile.ts <file.cpuprofile> [events]`.
 *
 * Sampled wall time of the main thread: on a machine shared with other work
 * a sample also lands on code whose thread was waiting for a core, so the
 * shares, not the milliseconds, are the figures to read.
 */
import fs from 'node:fs';

interface Node { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }
type Rule = [string, (url: string, fn: string) => boolean];

const RULES: Rule[] = [
  ['idle (waiting: PostgreSQL, the network)', (u, f) => f === '(idle)'],
  ['the profiler itself', (u) => /node:inspector/.test(u)],
  ['garbage collection', (u, f) => f === '(garbage collector)'],
  ['drain: counting a batch (drain.ts, count.ts)', (u) => /src\/analytics\/(drain|count)\.ts/.test(u)],
  ['user agent (ua-parser-js, isbot, ua.ts)', (u) => /node_modules\/(ua-parser-js|isbot)\/|src\/analytics\/ua\.ts/.test(u)],
  ['country (mmdb-lib, geo.ts)', (u) => /node_modules\/mmdb-lib\/|src\/analytics\/geo\.ts/.test(u)],
  ['visitor hash and salts (HMAC-SHA256, visitor.ts)', (u) => /src\/analytics\/visitor\.ts/.test(u)],
  ['event parsing and validation (event.ts: JSON, URL)', (u) => /src\/analytics\/event\.ts/.test(u)],
  ['group commit to analytics_buffer (groupCommit.ts, buffer.ts)', (u) => /src\/db\/groupCommit\.ts|src\/ingest\/buffer\.ts/.test(u)],
  ['pg driver (sending statements, reading results)', (u) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\/|src\/db\/prepared\.ts|bench\/sqlTiming\.ts|bench\/analytics-vigil\.ts/.test(u)],
  ['kysely (building and compiling statements)', (u) => /node_modules\/kysely\//.test(u)],
  ['read cache / change clock (src/db)', (u) => /src\/db\//.test(u)],
  ['request observer (ids, logs, metrics)', (u) => /src\/observability\/|node_modules\/(prom-client|pino)\//.test(u)],
  ['reading the body (body.ts)', (u) => /src\/transport\/body\.ts/.test(u)],
  ['ingest.ts itself (handler, fast path, answer)', (u) => /src\/analytics\/ingest\.ts/.test(u)],
  ['HTTP answer (headers, write)', (u) => /node:_http_outgoing/.test(u)],
  ['Express and the rest of the app', (u) => /node_modules\/(express|router|body-parser|parseurl|finalhandler)\/|src\//.test(u)],
];
const GENERIC: Rule[] = [
  ['HTTP request parsing (node:_http_*)', (u) => /node:_http_(server|incoming|common)/.test(u)],
  ['sockets and streams (node:net, streams, events)', (u) => /node:net|node:internal\/streams|stream_base_commons|node:events/.test(u)],
  ['promises and timers (microtasks, ticks)', (u, f) => /task_queues|node:internal\/timers/.test(u) || f === '(program)' || f === 'runMicrotasks'],
];

/** Milliseconds by piece, largest first, and the profile's length. */
export function summarize(file: string): { totalMs: number; rows: [string, number][] } {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const pieceOf = new Map<number, string>();
  const piece = (id: number): string => {
    let name = pieceOf.get(id);
    if (name) return name;
    name = 'other';
    search: for (const rules of [RULES, GENERIC]) {
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const { url, functionName } = byId.get(cur)!.callFrame;
        const rule = rules.find(([, m]) => m(url, functionName));
        if (rule) { name = rule[0]; break search; }
      }
    }
    pieceOf.set(id, name);
    return name;
  };
  const ms = new Map<string, number>();
  p.samples.forEach((id, i) => { const k = piece(id); ms.set(k, (ms.get(k) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000); });
  return { totalMs: (p.endTime - p.startTime) / 1000, rows: [...ms].sort((a, b) => b[1] - a[1]) };
}

/** The summary as lines: share of the sampled time, ms, and per 1,000 events when `events` is given. */
export function profileLines(file: string, events?: number): string[] {
  const { totalMs, rows } = summarize(file);
  const busy = rows.filter(([k]) => !k.startsWith('idle')).reduce((a, [, v]) => a + v, 0);
  return [
    `Where the Vigil process's main thread spent the load (${(totalMs / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(1)} s not idle; shares of the sampled time):`,
    ...rows.map(([k, v]) => `  ${((100 * v) / totalMs).toFixed(1).padStart(5)}%  ${Math.round(v).toString().padStart(6)} ms${events ? `  ${((1000 * v) / events).toFixed(0).padStart(5)} ms per 1,000 events` : ''}  ${k}`),
  ];
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: npx tsx bench/analytics-profile.ts <file.cpuprofile> [events]');
  console.log(profileLines(file, process.argv[3] ? Number(process.argv[3]) : undefined).join('\n'));
}
