/**
 * Request bodies of the error-ingestion benchmark (bench/errors.ts): Sentry
 * envelopes as @sentry/node and @sentry/browser 11 send them (reference A2,
 * A3, A7), for ISSUES distinct issues, built once before the load so the
 * client only splices a fresh event id into each request.
 *
 * Each issue has its own exception chain (1–3 exceptions, causes first, the
 * thrown error last, `mechanism` as the SDK sets it), 10–40 frames in all
 * (oldest first: node internals / node_modules or vendor bundles, then in-app
 * frames ending at an issue-specific throw site), so the issues group apart by
 * their in-app frames and types. Each event of an issue differs in its value's
 * parameters, user, tags, trace, breadcrumbs (which also bring it to a size
 * drawn log-uniformly from 2 to 20 KB), timestamp and id.
 *
 * A body is kept as `head` (text up to and including the payload's
 * `"event_id":"`, with the envelope header's event id in it too) and `tail`
 * (the rest of the event). Per request the client writes `head` with a new id
 * and the prebuilt `tail`. Gzip bodies are two gzip members (RFC 1952 allows
 * any number; Node's gunzip and zlib read them as one stream): a tiny stored
 * member for the head and the tail compressed in advance.
 */
import zlib from 'node:zlib';

/** Where the event id goes (32 characters, replaced per request). */
const ID = '@'.repeat(32);

/** One prebuilt envelope. */
export interface PoolBody {
  issue: number;
  project: number;
  /** Request style: Node SDK (no Content-Type, chunked), Node SDK gzip, or browser (text/plain, Content-Length). */
  style: 'node' | 'node-gzip' | 'browser';
  /** Text before the first id, between the ids, after the second id (the rest of the event). */
  a: string; b: string;
  tail: Buffer;
  /** Decompressed size of a whole body (bytes). */
  size: number;
  frames: number;
  chain: number;
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join('');
  return { next, int, pick, hex };
}
type Rng = ReturnType<typeof rng>;

const TYPES = ['TypeError', 'RangeError', 'Error', 'ReferenceError', 'SyntaxError', 'ValidationError', 'TimeoutError', 'DatabaseError',
  'PaymentDeclinedError', 'NotFoundError', 'ConflictError', 'AbortError', 'FetchError', 'AuthorizationError', 'QuotaExceededError', 'SerializationError'];
const VERBS = ['load', 'save', 'render', 'validate', 'charge', 'refund', 'sync', 'parse', 'fetch', 'resolve', 'compute', 'notify', 'schedule', 'export', 'import', 'merge', 'apply', 'reserve', 'ship', 'cancel'];
const NOUNS = ['Order', 'Invoice', 'Customer', 'Cart', 'Payment', 'Shipment', 'Coupon', 'Session', 'Report', 'Webhook', 'Product', 'Inventory', 'Address', 'Subscription', 'Token'];
const AREAS = ['orders', 'billing', 'accounts', 'catalog', 'shipping', 'auth', 'reports', 'notifications', 'search', 'checkout'];
const PROPS = ['id', 'items', 'length', 'total', 'address', 'email', 'status', 'currency', 'map', 'then'];
const VALUES: ((r: Rng, n: string) => string)[] = [
  (r) => `Cannot read properties of undefined (reading '${r.pick(PROPS)}')`,
  (r, n) => `${n} ${r.int(1, 999_999)} not found`,
  (r, n) => `Request to https://api.${n.toLowerCase()}s.internal/v1/${r.int(1, 99_999)} timed out after ${r.int(1000, 30_000)}ms`,
  (r, n) => `duplicate key value violates unique constraint "${n.toLowerCase()}s_pkey" (id=${r.int(1, 9_999_999)})`,
  (r) => `Invalid array length ${-r.int(1, 1000)}`,
  (r, n) => `${n} amount ${(r.next() * 1000).toFixed(2)} exceeds the limit of ${r.int(100, 900)}.00`,
  (r) => `Unexpected token '${r.pick(['<', '}', 'u', ']'])}' in JSON at position ${r.int(0, 4000)}`,
  (r, n) => `User ${r.hex(8)} may not ${r.pick(VERBS)} ${n.toLowerCase()} ${r.int(1, 99_999)}`,
  (r) => `connect ECONNREFUSED 10.0.${r.int(0, 255)}.${r.int(1, 254)}:${r.pick([5432, 6379, 443, 8080])}`,
  (r, n) => `Quota exceeded for ${n.toLowerCase()}s: ${r.int(1001, 5000)} of 1000 this hour`,
];
const NODE_MODULES = [
  ['express/lib/router/layer.js', 'express.lib.router:layer', 'Layer.handle [as handle_request]'],
  ['express/lib/router/index.js', 'express.lib.router:index', 'next'],
  ['express/lib/router/route.js', 'express.lib.router:route', 'Route.dispatch'],
  ['pg/lib/client.js', 'pg.lib:client', 'Client._handleReadyForQuery'],
  ['pg-pool/index.js', 'pg-pool:index', 'BoundPool.query'],
  ['kysely/dist/cjs/query-executor/query-executor-base.js', 'kysely.dist.cjs.query-executor:query-executor-base', 'DefaultQueryExecutor.executeQuery'],
  ['ioredis/built/Redis.js', 'ioredis.built:Redis', 'Redis.sendCommand'],
  ['undici/lib/fetch/index.js', 'undici.lib.fetch:index', 'fetch'],
];
const NODE_INTERNALS = [
  ['node:internal/process/task_queues', 'processTicksAndRejections'],
  ['node:internal/timers', 'listOnTimeout'],
  ['node:events', 'EventEmitter.emit'],
  ['node:internal/streams/readable', 'Readable.push'],
];
const VENDOR = ['https://shop.example.com/static/js/vendor.4f1c2a9b.js', 'https://shop.example.com/static/js/react-dom.production.min.js'];

interface Frame { [k: string]: unknown }

/** The fixed part of one issue: its chain of exceptions with frames, platform and project. */
interface IssueTemplate {
  platform: 'node' | 'javascript';
  project: number;
  chain: { type: string; value: (r: Rng) => string; frames: Frame[] }[];
  frames: number;
}

function codeLine(r: Rng, fn: string): string {
  return r.pick([
    `    const result = await ${fn}(ctx, input);`,
    `    if (!record) throw new NotFoundError(\`\${kind} \${id} not found\`);`,
    `    return ${fn}(payload.items.map((item) => item.${r.pick(PROPS)}));`,
    `    const total = lines.reduce((sum, l) => sum + l.amount * l.quantity, 0);`,
    `    await db.insertInto('${r.pick(AREAS)}').values(row).execute();`,
    `    throw new ${r.pick(TYPES)}(message, { cause: err });`,
  ]);
}

function nodeInAppFrame(r: Rng, area: string, file: string, fn: string, withContext: boolean): Frame {
  const lineno = r.int(10, 400);
  const f: Frame = { filename: `/app/dist/${area}/${file}.js`, module: `dist.${area}:${file}`, function: fn, lineno, colno: r.int(5, 60), in_app: true };
  if (withContext) {
    f.pre_context = Array.from({ length: 3 }, () => codeLine(r, fn));
    f.context_line = codeLine(r, fn);
    f.post_context = Array.from({ length: 3 }, () => codeLine(r, fn));
  }
  return f;
}

/** The issue's template; `used` keeps throw sites distinct across issues. */
function issueTemplate(i: number, projects: number, used: Set<string>): IssueTemplate {
  const r = rng(1_000_003 * (i + 1));
  const project = i % projects;
  const platform = project % 2 === 0 ? 'node' : 'javascript';
  const chainLength = 1 + (r.next() < 0.55 ? 1 : 0) + (r.next() < 0.2 ? 1 : 0);
  const total = r.int(10, 40);
  const sizes = Array.from({ length: chainLength }, (_, k) => (k === chainLength - 1 ? total - (chainLength - 1) * Math.floor(total / (chainLength + 1)) : Math.floor(total / (chainLength + 1))));
  const chain: IssueTemplate['chain'] = [];
  for (let k = 0; k < chainLength; k++) {
    let site: string;
    do { site = `${r.pick(VERBS)}${r.pick(NOUNS)}`; } while (used.has(`${project}:${site}:${k}`));
    used.add(`${project}:${site}:${k}`);
    const noun = /[A-Z]\w+$/.exec(site)![0];
    const area = r.pick(AREAS);
    const frames: Frame[] = [];
    const n = sizes[k];
    const inApp = Math.max(3, Math.floor(n * (0.3 + r.next() * 0.4)));
    for (let f = 0; f < n - inApp; f++) {
      if (platform === 'node') {
        if (f < 2) { const [filename, fn] = r.pick(NODE_INTERNALS); frames.push({ filename, module: filename.replace(/^node:/, ''), function: fn, lineno: r.int(50, 900), colno: r.int(3, 40), in_app: false }); }
        else { const [p, module, fn] = r.pick(NODE_MODULES); frames.push({ filename: `/app/node_modules/${p}`, module, function: fn, lineno: r.int(20, 700), colno: r.int(3, 40), in_app: false }); }
      } else {
        const url = r.pick(VENDOR);
        frames.push({ filename: url, function: r.pick(['ku', 'Ws', 'Cf', 'dispatchEvent', 'invokeGuardedCallback', 'batchedUpdates$1']), lineno: 1, colno: r.int(1000, 140_000), in_app: false });
      }
    }
    for (let f = 0; f < inApp; f++) {
      const last = f === inApp - 1;
      const fn = last ? site : `${r.pick(VERBS)}${r.pick(NOUNS)}`;
      const file = last ? `${noun.toLowerCase()}Service` : r.pick(['handler', 'router', 'service', 'repository', 'middleware', 'worker']);
      if (platform === 'node') frames.push(nodeInAppFrame(r, area, file, fn, f >= inApp - 4));
      else {
        const url = `https://shop.example.com/static/js/${area}.${r.hex(8)}.chunk.js`;
        frames.push({ filename: url, function: fn, lineno: r.int(1, 3), colno: r.int(100, 90_000), in_app: true });
      }
    }
    const type = k === chainLength - 1 ? r.pick(['Error', ...TYPES]) : r.pick(TYPES);
    const valueOf = r.pick(VALUES);
    chain.push({ type, value: (rr) => valueOf(rr, noun), frames });
  }
  return { platform, project, chain, frames: total };
}

const BREADCRUMB_MESSAGES = ['GET /api/cart 200', 'POST /api/checkout 502', 'ui.click button#pay', 'navigation /cart → /checkout', 'console.warn slow render',
  'query select * from orders where id = $1', 'redis GET session:*', 'fetch https://payments.example.net/v2/intents'];

function breadcrumb(r: Rng, t: number, node: boolean): Record<string, unknown> {
  const kind = r.int(0, 3);
  const timestamp = Number((t - r.int(1, 600) - r.next()).toFixed(3));
  if (kind === 0) return { timestamp, type: 'http', category: node ? 'http' : 'fetch', level: 'info', data: { method: r.pick(['GET', 'POST', 'PUT']), url: `https://api.example.com/v1/${r.pick(AREAS)}/${r.int(1, 99_999)}?expand=${r.pick(PROPS)}`, status_code: r.pick([200, 200, 200, 201, 404, 500, 502]), 'http.response_content_length': r.int(10, 90_000) } };
  if (kind === 1) return { timestamp, category: 'console', level: r.pick(['log', 'warning', 'error']), message: `${r.pick(BREADCRUMB_MESSAGES)} (${r.hex(12)})`, data: { arguments: [r.pick(BREADCRUMB_MESSAGES), r.int(0, 5000)], logger: 'console' } };
  if (kind === 2) return { timestamp, category: node ? 'query' : 'ui.click', message: node ? `select id, status, total from ${r.pick(AREAS)} where customer_id = $1 and created_at > $2 limit ${r.int(1, 500)}` : `div.${r.pick(AREAS)} > button.btn-primary[data-id="${r.int(1, 9999)}"]` };
  return { timestamp, category: 'navigation', data: { from: `/${r.pick(AREAS)}/${r.int(1, 9999)}`, to: `/${r.pick(AREAS)}/${r.int(1, 9999)}` } };
}

const MODULES = Object.fromEntries(['express@5.1.0', 'pg@8.16.3', 'kysely@0.28.2', 'ioredis@5.6.1', 'zod@3.25.67', 'pino@9.7.0', 'luxon@3.7.1', 'stripe@18.3.0', 'undici@7.11.0',
  'jsonwebtoken@9.0.2', 'bcryptjs@3.0.2', 'nanoid@5.1.5', 'dotenv@17.0.1', 'semver@7.7.2', 'lodash@4.17.21', 'uuid@11.1.0', 'ajv@8.17.1', 'yaml@2.8.0'].map((m) => { const at = m.lastIndexOf('@'); return [m.slice(0, at), m.slice(at + 1)]; }));

/** One event of issue `t` (variant `v`), with `ID` where the event id goes. */
function envelope(t: IssueTemplate, r: Rng, now: number, target: number): { text: string } {
  const node = t.platform === 'node';
  const release = r.pick(['myapp@1.2.3', 'myapp@1.2.4', 'myapp@1.3.0']);
  const environment = r.pick(['production', 'production', 'staging']);
  const traceId = r.hex(32);
  const sdk = node ? { name: 'sentry.javascript.node', version: '11.12.0' } : { name: 'sentry.javascript.browser', version: '11.12.0' };
  const timestamp = Number((now - r.next() * 60).toFixed(3));
  const values = t.chain.map((x, k) => {
    const last = k === t.chain.length - 1;
    return {
      type: x.type, value: x.value(r), stacktrace: { frames: x.frames },
      mechanism: last ? { handled: r.next() < 0.7, type: node ? 'generic' : 'onerror', exception_id: 0 }
        : { handled: true, type: 'chained', source: 'cause', exception_id: t.chain.length - 1 - k, parent_id: t.chain.length - 2 - k },
    };
  });
  const user = r.next() < 0.8 ? { id: `u${r.int(1, 500)}`, email: `customer${r.int(1, 500)}@example.com`, ip_address: `203.0.113.${r.int(1, 254)}` } : { ip_address: '{{auto}}' };
  const contexts: Record<string, unknown> = {
    trace: { trace_id: traceId, span_id: r.hex(16), parent_span_id: r.hex(16) },
    ...(node
      ? { runtime: { name: 'node', version: 'v20.20.2' }, os: { kernel_version: '6.8.0-45-generic', name: 'Linux', version: '6.8.0' }, device: { boot_time: '2026-11-20T08:00:00.000Z', arch: 'x64', memory_size: 8_323_006_464, free_memory: r.int(1e8, 4e9), processor_count: 2, cpu_description: 'AMD EPYC 7763 64-Core Processor', processor_frequency: 2445 }, app: { app_start_time: '2026-11-21T20:00:00.000Z', app_memory: r.int(8e7, 4e8) }, culture: { locale: 'en-US', timezone: 'UTC' }, cloud_resource: { 'cloud.provider': 'aws', 'cloud.region': 'eu-west-1' } }
      : { browser: { name: r.pick(['Chrome', 'Firefox', 'Safari']), version: `${r.int(120, 140)}.0` }, os: { name: r.pick(['Windows', 'macOS', 'Android', 'iOS']), version: `${r.int(10, 17)}` } }),
  };
  const event: Record<string, unknown> = {
    event_id: ID, // must stay the first key: the client splices ids in here
    exception: { values },
    level: r.pick(['error', 'error', 'error', 'fatal', 'warning']),
    platform: t.platform,
    timestamp,
    environment,
    release,
    ...(node ? { server_name: `web-${r.int(1, 12)}` } : { request: { url: `https://shop.example.com/${r.pick(AREAS)}/${r.int(1, 9999)}`, headers: { 'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', Referer: 'https://shop.example.com/' } } }),
    tags: { feature: r.pick(['checkout', 'search', 'signup', 'reports', 'billing']), region: r.pick(['eu-west-1', 'us-east-1']), tenant: `t${r.int(1, 80)}` },
    user,
    contexts,
    breadcrumbs: [] as unknown[],
    sdk: { ...sdk, integrations: node ? ['InboundFilters', 'FunctionToString', 'LinkedErrors', 'RequestData', 'Console', 'Http', 'NodeFetch', 'OnUncaughtException', 'OnUnhandledRejection', 'ContextLines', 'LocalVariables', 'Context', 'Modules'] : ['InboundFilters', 'FunctionToString', 'BrowserApiErrors', 'Breadcrumbs', 'GlobalHandlers', 'LinkedErrors', 'Dedupe', 'HttpContext'], packages: [{ name: node ? 'npm:@sentry/node' : 'npm:@sentry/browser', version: '11.12.0' }] },
    ...(node ? { modules: MODULES } : {}),
  };
  const header = { event_id: ID, sent_at: new Date(now * 1000).toISOString(), sdk, trace: { environment, release, public_key: '', trace_id: traceId, sample_rand: Number(r.next().toFixed(6)) } };
  const head = `${JSON.stringify(header)}\n{"type":"event"}\n`;
  const crumbs = event.breadcrumbs as unknown[];
  // Breadcrumbs bring the body to its drawn size (never over 20 KB).
  let length = head.length + JSON.stringify(event).length;
  while (length < target && crumbs.length < 100) {
    const crumb = breadcrumb(r, timestamp, node);
    const more = JSON.stringify(crumb).length + (crumbs.length ? 1 : 0);
    if (length + more > 20 * 1024) break;
    crumbs.push(crumb);
    length += more;
  }
  crumbs.sort((x, y) => (x as { timestamp: number }).timestamp - (y as { timestamp: number }).timestamp);
  return { text: head + JSON.stringify(event) };
}

/** The pool: `variants` events of each of `issues` issues, in a shuffled order. */
export function buildPool(issues: number, variants: number, projects: number, publicKeys: string[]): PoolBody[] {
  const used = new Set<string>();
  const templates = Array.from({ length: issues }, (_, i) => issueTemplate(i, projects, used));
  const now = Date.now() / 1000;
  const pool: PoolBody[] = [];
  for (let v = 0; v < variants; v++) {
    for (let i = 0; i < issues; i++) {
      const t = templates[i];
      const r = rng(7919 * (v + 1) + 104_729 * (i + 1));
      const target = Math.round(2048 * 10 ** r.next()); // log-uniform 2–20 KB
      let { text } = envelope(t, r, now, target);
      text = text.replace('"public_key":""', `"public_key":"${publicKeys[t.project]}"`);
      const first = text.indexOf(ID);
      const second = text.indexOf(ID, first + ID.length);
      const a = text.slice(0, first);
      const b = text.slice(first + ID.length, second);
      const rest = Buffer.from(text.slice(second + ID.length));
      const style: PoolBody['style'] = t.platform === 'javascript' ? 'browser' : (v + i) % 2 === 0 ? 'node-gzip' : 'node';
      pool.push({
        issue: i, project: t.project, style, a, b, tail: style === 'node-gzip' ? zlib.gzipSync(rest, { level: 6 }) : rest,
        size: Buffer.byteLength(text), frames: t.frames, chain: t.chain.length,
      });
    }
  }
  const r = rng(42);
  for (let k = pool.length - 1; k > 0; k--) { const j = Math.floor(r.next() * (k + 1)); [pool[k], pool[j]] = [pool[j], pool[k]]; }
  return pool;
}

/** A gzip member holding `data` uncompressed (a stored deflate block): costs nothing to make per request. */
export function storedGzip(data: Buffer): Buffer {
  if (data.length > 65_535) throw new Error('one stored block holds at most 65,535 bytes');
  const head = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, data.length & 255, data.length >> 8, ~data.length & 255, (~data.length >> 8) & 255]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(zlib.crc32(data), 0);
  trailer.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, data, trailer]);
}

/** The body of one request: `head` (with `id` twice) then the prebuilt tail; gzip bodies as two members. */
export function bodyOf(p: PoolBody, id: string): Buffer[] {
  const head = Buffer.from(p.a + id + p.b + id);
  return p.style === 'node-gzip' ? [storedGzip(head), p.tail] : [head, p.tail];
}
