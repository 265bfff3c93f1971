/**
 * Where the Vigil process's time went during the error-ingestion benchmark
 * (bench/errors.ts with BENCH_CPU_PROF): a V8 CPU profile summed into the
 * pieces of the ingestion path. Each sample goes to the innermost frame of
 * its stack that belongs to a known piece (so a `writev` under pg's query
 * submission counts as pg, under `res.json` as the HTTP answer); the generic
 * pieces (HTTP parsing, sockets and streams) only when no other frame of the
 * stack is known; samples with no known frame go to "other". Also usable alone:
 * `npx tsx bench/errors-profile.ts <file.cpuprofile>`.
 *
 * Sampled wall time of the main thread: on a machine shared with other work
 * a sample also lands on code whose thread was waiting for a core, so the
 * shares, not the milliseconds, are the figures to read.
 */
import fs from 'node:fs';

interface Node { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/** Pieces, matched on a frame's file (and function); the first rule that matches a frame names it. */
const RULES: [string, (url: string, fn: string) => boolean][] = [
  ['idle (waiting: PostgreSQL, the network)', (u, f) => f === '(idle)'],
  ['the profiler itself (inspector messages)', (u) => /node:inspector|bench\/errors-vigil\.ts/.test(u)],
  ['garbage collection', (u, f) => f === '(garbage collector)'],
  ['grouper (grouping.ts, grouper.ts)', (u) => /src\/errors\/(grouper|grouping)\.ts/.test(u)],
  ['rate limits (rate-limiter-flexible, ratelimit.ts)', (u) => /rate-limiter-flexible|src\/pipeline\/ratelimit\.ts/.test(u)],
  ['gunzip (zlib streams in readBody)', (u) => /node:zlib/.test(u)],
  ['envelope parsing (envelope.ts: JSON.parse)', (u) => /src\/errors\/envelope\.ts/.test(u)],
  ['group commit (groupCommit.ts)', (u) => /src\/db\/groupCommit\.ts/.test(u)],
  ['pg driver (sending statements: writev; reading results)', (u) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\/|src\/db\/prepared\.ts|bench\/sqlTiming\.ts/.test(u)],
  ['kysely (building and compiling statements)', (u) => /node_modules\/kysely\//.test(u)],
  ['read cache / change clock (src/db)', (u) => /src\/db\//.test(u)],
  ['HTTP answer (res.json, headers, write)', (u) => /node_modules\/express\/lib\/response\.js|node:_http_outgoing/.test(u)],
  ['request metrics and logging (observability)', (u) => /src\/observability\/|node_modules\/(prom-client|pino)\//.test(u)],
  ['reading the body (body.ts, streams)', (u) => /src\/transport\/body\.ts/.test(u)],
  ['ingest.ts itself (JSON.stringify of payloads, auth, CORS)', (u) => /src\/errors\/ingest\.ts/.test(u)],
  ['Express routing and middleware', (u) => /node_modules\/(express|router|body-parser|parseurl|finalhandler)\/|src\/transport\/|src\/statuspages\//.test(u)],
];
/** Pieces a stack goes to only when none of RULES matches any of its frames. */
const GENERIC: typeof RULES = [
  ['HTTP request parsing (node:_http_*)', (u) => /node:_http_(server|incoming|common)/.test(u)],
  ['sockets and streams (node:net, node:internal/streams)', (u) => /node:net|node:internal\/streams|stream_base_commons|node:events/.test(u)],
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
    const known = pieceOf.get(id);
    if (known) return known;
    let name = 'other';
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
  if (!file) throw new Error('usage: npx tsx bench/errors-profile.ts <file.cpuprofile> [events]');
  console.log(profileLines(file, process.argv[3] ? Number(process.argv[3]) : undefined).join('\n'));
}
