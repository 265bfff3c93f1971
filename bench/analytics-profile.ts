/**
 * Where the Vigil process's time went during the analytics ingestion load
 * (bench/analytics.ts part a, with BENCH_CPU_PROF): a V8 CPU profile summed
 * into the pieces of the ingestion path and the drain running beside it.
 * Each sample goes to the innermost frame of its stack that belongs to a
 * known piece (so SHA-256 under visitor.ts is the visitor hash, JSON.parse under
 * event.ts is event parsing, pg's socket writes are the pg driver); the
 * generic pieces (HTTP parsing, sockets, promises) only when no frame of the
 * stack is known. The drain's statements run asynchronously, so its piece is
 * its own JavaScript (sessions, roll-up deltas, the array literals for unnest); their
 * round trips are in the pg driver's piece. Also usable alone:
 * `npx tsx bench/analytics-profile.ts <file.cpuprofile> [events]`.
 */
import { profileLines as lines, profileMain, type Rule } from './profile';

/** Pieces, matched on a frame's file (and function); the first rule that matches a frame names it. */
const RULES: Rule[] = [
  ['idle (waiting: PostgreSQL, the network)', (u, f) => f === '(idle)'],
  ['the profiler itself', (u) => /node:inspector/.test(u)],
  ['garbage collection', (u, f) => f === '(garbage collector)'],
  ['drain: counting a batch (drain.ts, count.ts, arrayLiteral.ts)', (u) => /src\/analytics\/(drain|count)\.ts|src\/db\/arrayLiteral\.ts/.test(u)],
  ['user agent (ua-parser-js, isbot, ua.ts)', (u) => /node_modules\/(ua-parser-js|isbot)\/|src\/analytics\/ua\.ts/.test(u)],
  ['country (mmdb-lib, geo.ts)', (u) => /node_modules\/mmdb-lib\/|src\/analytics\/geo\.ts/.test(u)],
  ['visitor hash and salts (SHA-256, visitor.ts)', (u) => /src\/analytics\/visitor\.ts/.test(u)],
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

/** The summary as lines: share of the sampled time, ms, and per 1,000 events when `events` is given. */
export function profileLines(file: string, events?: number): string[] {
  return lines(file, RULES, events);
}

if (require.main === module) profileMain(RULES, 'bench/analytics-profile.ts');
