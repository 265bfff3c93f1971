/**
 * Where the Vigil process's time went during the error-ingestion benchmark
 * (bench/errors.ts with BENCH_CPU_PROF): a V8 CPU profile summed into the
 * pieces of the ingestion path. Each sample goes to the innermost frame of
 * its stack that belongs to a known piece (so a `writev` under pg's query
 * submission counts as pg, under `res.json` as the HTTP answer); the generic
 * pieces (HTTP parsing, sockets and streams) only when no other frame of the
 * stack is known; samples with no known frame go to "other". The profile is
 * of the main thread only: the envelope parser's thread (src/errors/parsePool.ts),
 * which parses and summarises bodies of 2 KB and more, is not in it (its CPU is
 * in the process's figure). Also usable alone:
 * `npx tsx bench/errors-profile.ts <file.cpuprofile>`.
 */
import { profileLines as lines, profileMain, type Rule } from './profile';

/** Pieces, matched on a frame's file (and function); the first rule that matches a frame names it. */
const RULES: Rule[] = [
  ['idle (waiting: PostgreSQL, the network)', (u, f) => f === '(idle)'],
  ['the profiler itself (inspector messages)', (u) => /node:inspector|bench\/errors-vigil\.ts/.test(u)],
  ['garbage collection', (u, f) => f === '(garbage collector)'],
  ['grouper (grouping.ts, grouper.ts)', (u) => /src\/errors\/(grouper|grouping)\.ts/.test(u)],
  ['rate limits (rate-limiter-flexible, ratelimit.ts)', (u) => /rate-limiter-flexible|src\/pipeline\/ratelimit\.ts/.test(u)],
  ['decompression (zlib, readBody)', (u) => /node:zlib/.test(u)],
  ['envelope parsing on the main thread (small bodies; parsePool.ts, envelope.ts)', (u) => /src\/errors\/(envelope|parsed|parsePool)\.ts|node:internal\/worker/.test(u)],
  ['group commit (groupCommit.ts)', (u) => /src\/db\/groupCommit\.ts/.test(u)],
  ['pg driver (sending statements: writev; reading results)', (u) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\/|src\/db\/prepared\.ts|bench\/sqlTiming\.ts/.test(u)],
  ['kysely (building and compiling statements)', (u) => /node_modules\/kysely\//.test(u)],
  ['read cache / change clock (src/db)', (u) => /src\/db\//.test(u)],
  ['HTTP answer (headers, write)', (u) => /node_modules\/express\/lib\/response\.js|node:_http_outgoing/.test(u)],
  ['request metrics and logging (observability)', (u) => /src\/observability\/|node_modules\/(prom-client|pino)\//.test(u)],
  ['reading the body (body.ts, streams)', (u) => /src\/transport\/body\.ts/.test(u)],
  ['ingest.ts itself (auth, CORS, the insert)', (u) => /src\/errors\/ingest\.ts/.test(u)],
  ['Express routing and middleware (requests the fast path leaves to the app)', (u) => /node_modules\/(express|router|body-parser|parseurl|finalhandler)\/|src\/transport\/|src\/statuspages\//.test(u)],
];

/** The summary as lines: share of the sampled time, ms, and per 1,000 events when `events` is given. */
export function profileLines(file: string, events?: number): string[] {
  return lines(file, RULES, events);
}

if (require.main === module) profileMain(RULES, 'bench/errors-profile.ts');
