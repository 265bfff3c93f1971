/**
 * Search benchmark — `npm run bench:search`.
 *
 * Vigil (child, bench/pings-vigil.ts: the API without a worker) on a fresh
 * database. One organisation gets BENCH_ROWS (100,000) rows of each of
 * monitors (two tags each), incidents (a fifth with a postmortem of ~600
 * characters), notification channels (a third `email`), hosts and error
 * issues, inserted set-wise in SQL, named from a small vocabulary the way
 * real fleets are (`checkout-prod-eu-west-1 #4242`), so that terms range
 * from one record to a third of them; a second organisation gets the same
 * monitors (the indexes hold both). Then GET /search (every type, default
 * limit 5) with each term below, BENCH_REQUESTS sequential requests each after
 * a warm-up, and autocannon (10 connections, BENCH_DURATION s) on the mix.
 *
 * Prints p50/p99/max per term and for the mix, requests/s under load, and
 * the row counts. Environment: BENCH_ROWS, BENCH_REQUESTS (200),
 * BENCH_DURATION (10), BENCH_DATABASE_URL (else a fresh vigil_bench_<pid> on
 * the local PostgreSQL, dropped at the end).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { benchDatabase, startChild } from './lib';
import type { PingsVigilReady } from './pings-vigil';

const ROWS = Number(process.env.BENCH_ROWS || 100_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS || 200);
const DURATION = Number(process.env.BENCH_DURATION || 10);

/** What is searched: [label, q, extra query]. */
const TERMS: [string, string, string][] = [
  ['one record (full name)', 'checkout-dev-ap-south-1 #42400', ''],
  ['a service (~5% of each type)', 'checkout', ''],
  ['an environment (~33%)', 'prod', ''],
  ['inside names only (~5%)', 'gateway', ''],
  ['two characters (prefix)', 'ca', ''],
  ['no match', 'zzqxv', ''],
  ['postmortem words', 'certificate rotation', '&type=postmortem'],
  ['e-mail address', 'oncall-78@', '&type=channel'],
];

const SERVICES = ['checkout', 'payments-api', 'api-gateway', 'search', 'auth', 'billing', 'inventory', 'shipping', 'cart', 'catalog',
  'recommendations', 'notifications', 'email-sender', 'sms-gateway', 'user-profile', 'orders', 'reviews', 'analytics', 'reporting', 'cdn-edge'];
const ENVS = ['prod', 'staging', 'dev'];
const REGIONS = ['eu-west-1', 'us-east-1', 'ap-south-1', 'eu-central-1'];

/** `<service>-<env>-<region> #<g>` of generate_series value `g`, in SQL. */
const NAME = `($1::text[])[1 + g % 20] || '-' || ($2::text[])[1 + (g / 20) % 3] || '-' || ($3::text[])[1 + (g / 60) % 4] || ' #' || g`;

async function fill(c: pg.Client, orgId: string, wsId: string, other: { orgId: string; wsId: string }): Promise<void> {
  const lists = [SERVICES, ENVS, REGIONS];
  const t0 = Date.now();
  for (const [org, ws] of [[orgId, wsId], [other.orgId, other.wsId]]) {
    await c.query(`insert into monitors (id, organization_id, workspace_id, name, kind, config_enc, interval_seconds, tags, enabled)
      select 'mon_b' || $4 || g, $4, $5, ${NAME}, 'http', 'sealed', 300, array[($2::text[])[1 + (g / 20) % 3], 'team-' || g % 7], false
      from generate_series(1, ${ROWS}) g`, [...lists, org, ws]);
  }
  await c.query(`insert into incidents (id, organization_id, workspace_id, monitor_id, title, cause, severity, status, started_at, resolved_at,
      postmortem_body, postmortem_author, postmortem_updated_at)
    select 'inc_b' || g, $4, $5, 'mon_b' || $4 || (1 + g % ${ROWS}), ${NAME} || ' is down', 'timeout', 'critical', 'resolved',
      now() - make_interval(mins => ${ROWS} - g), now() - make_interval(mins => ${ROWS} - g - 1),
      case when g % 5 = 0 then '# What happened' || chr(10) || 'At ' || g || ' the ' || ($1::text[])[1 + g % 20]
        || ' service stopped answering. ' || (array['A certificate rotation left the load balancer without a valid chain.',
          'The database ran out of connections after a deploy.', 'A DNS change pointed the service at the old cluster.',
          'Disk pressure on the node evicted the pods.'])[1 + (g / 5) % 4] || ' ' || repeat('We restored service and wrote follow-ups. ', 10) end,
      case when g % 5 = 0 then 'bench' end, case when g % 5 = 0 then now() end
    from generate_series(1, ${ROWS}) g`, [...lists, orgId, wsId]);
  await c.query(`insert into notification_channels (id, organization_id, workspace_id, kind, name, target, config)
    select 'chn_b' || g, $3, case when g % 2 = 0 then $4 end, case when g % 3 = 0 then 'email' else 'webhook' end,
      ($1::text[])[1 + g % 20] || ' ' || ($2::text[])[1 + (g / 20) % 3] || ' alerts ' || g,
      case when g % 3 = 0 then 'oncall-' || g || '@example.test' else 'hooks.example.test' end, '{}'
    from generate_series(1, ${ROWS}) g`, [SERVICES, ENVS, orgId, wsId]);
  await c.query(`insert into hosts (id, organization_id, name, provider, address)
    select 'hst_b' || g, $3, ($1::text[])[1 + g % 20] || '-' || ($2::text[])[1 + (g / 20) % 3] || '-' || g || '.internal', 'Hetzner', '10.' || (g / 65536) || '.' || (g / 256 % 256) || '.' || (g % 256)
    from generate_series(1, ${ROWS}) g`, [SERVICES, ENVS, orgId]);
  await c.query(`insert into error_projects (id, organization_id, workspace_id, public_key, name, platform) values ('prj_b', $1, $2, 'benchkey', 'Bench web', 'javascript')`, [orgId, wsId]);
  await c.query(`insert into error_issues (id, project_id, organization_id, fingerprint, title, culprit, level, times_seen, first_seen_at, last_seen_at)
    select 'iss_b' || g, 'prj_b', $2, 'fp' || g, (array['TypeError', 'RangeError', 'ReferenceError'])[1 + g % 3] || ': cannot read ' || ($1::text[])[1 + g % 20] || ' of undefined #' || g,
      'app/' || ($1::text[])[1 + g % 20] || '.js', 'error', 1, now(), now()
    from generate_series(1, ${ROWS}) g`, [SERVICES, orgId]);
  // As autovacuum would have by then: statistics, and GIN pending lists merged.
  for (const t of ['monitors', 'incidents', 'notification_channels', 'hosts', 'error_issues']) await c.query(`vacuum analyze ${t}`);
  console.log(`filled in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${ROWS.toLocaleString('en-US')} monitors (and as many in a second organisation), incidents (${(ROWS / 5).toLocaleString('en-US')} postmortems), channels, hosts, error issues`);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const ms = (n: number) => n.toFixed(1);

async function main(): Promise<void> {
  const db = await benchDatabase();
  if (!db.url) throw new Error('bench:search needs a PostgreSQL URL (BENCH_DATABASE_URL or the local server)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-search-'));
  const env = { ...process.env, DATABASE_URL: db.url, MASTER_KEY: randomBytes(32).toString('base64'), DATA_DIR: dataDir, WORKER: 'false' };
  const vigil = await startChild<PingsVigilReady>('pings-vigil.ts', env);
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const { rows: [org] } = await c.query(`select organization_id from workspaces where id = $1`, [vigil.ready.workspaceId]);
    await c.query(`insert into organizations (id, name, plan) values ('org_bench_other', 'Other', 'enterprise')`);
    await c.query(`insert into workspaces (id, organization_id, name, slug, is_default) values ('ws_bench_other', 'org_bench_other', 'Default', 'default', true)`);
    await fill(c, org.organization_id, vigil.ready.workspaceId, { orgId: 'org_bench_other', wsId: 'ws_bench_other' });
    const headers = { authorization: `Bearer ${vigil.ready.apiKey}` };
    const url = (q: string, extra: string) => `${vigil.ready.url}/api/v1/search?q=${encodeURIComponent(q)}${extra}`;
    console.log(`\nGET /search, ${REQUESTS} sequential requests per term (after ${Math.min(20, REQUESTS)} warm-up):\n`);
    console.log('| Term | q | hits | p50 (ms) | p99 (ms) | max (ms) |\n|---|---|---:|---:|---:|---:|');
    const all: number[] = [];
    for (const [label, q, extra] of TERMS) {
      let hits = 0;
      for (let i = 0; i < Math.min(20, REQUESTS); i++) {
        const res = await fetch(url(q, extra), { headers });
        const body = await res.json() as { data: unknown[] };
        if (!res.ok) throw new Error(`${q}: ${res.status} ${JSON.stringify(body)}`);
        hits = body.data.length;
      }
      const times: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const t = performance.now();
        const res = await fetch(url(q, extra), { headers });
        await res.arrayBuffer();
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      all.push(...times);
      console.log(`| ${label} | \`${q}\`${extra ? ` (${extra.slice(1)})` : ''} | ${hits} | ${ms(pct(times, 50))} | ${ms(pct(times, 99))} | ${ms(times.at(-1)!)} |`);
    }
    all.sort((a, b) => a - b);
    console.log(`| all terms | | | ${ms(pct(all, 50))} | ${ms(pct(all, 99))} | ${ms(all.at(-1)!)} |`);
    const r = await autocannon({
      url: vigil.ready.url, connections: 10, duration: DURATION, headers,
      requests: TERMS.map(([, q, extra]) => ({ method: 'GET' as const, path: `/api/v1/search?q=${encodeURIComponent(q)}${extra}` })),
    });
    console.log(`\nautocannon, 10 connections, ${DURATION} s, the terms in turn: ${Math.round(r.requests.average)} requests/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx + r.errors + r.timeouts}`);
  } finally {
    await c.end();
    await vigil.stop();
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
