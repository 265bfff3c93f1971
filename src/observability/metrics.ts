/**
 * Prometheus metrics (prom-client). The counters and histograms live in one
 * registry for the process, as Prometheus scrapes processes; the gauges read
 * at scrape time (pool, due monitors, queue depth, the scheduler's last poll)
 * belong to one running server and sit in its own registry, merged into the
 * answer of its `/metrics`. Names follow Prometheus conventions; the README
 * lists them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type pg from 'pg';
import client from 'prom-client';
import type { Db } from '../db/connect';
import { ROOT } from '../paths';

const processRegistry = new client.Registry();
client.collectDefaultMetrics({ register: processRegistry });

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The instruments code records into. Labels are bounded sets: never ids or raw paths. */
export const metrics = {
  httpRequests: new client.Counter({
    name: 'vigil_http_requests_total', help: 'HTTP requests answered, by operation (operationId or area), method and status.',
    labelNames: ['operation', 'method', 'status'] as const, registers: [processRegistry],
  }),
  httpDuration: new client.Histogram({
    name: 'vigil_http_request_duration_seconds', help: 'Time from a request arriving to its answer being sent.',
    labelNames: ['operation', 'method'] as const, buckets: SECONDS, registers: [processRegistry],
  }),
  checks: new client.Counter({
    name: 'vigil_checks_total', help: 'Checks run by this process, by monitor kind and result (up, degraded, down).',
    labelNames: ['kind', 'result'] as const, registers: [processRegistry],
  }),
  checkDuration: new client.Histogram({
    name: 'vigil_check_duration_seconds', help: 'Duration of one check, by monitor kind.',
    labelNames: ['kind'] as const, buckets: SECONDS, registers: [processRegistry],
  }),
  schedulingLag: new client.Histogram({
    name: 'vigil_scheduling_lag_seconds', help: 'How late a check started after its monitor was due.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300], registers: [processRegistry],
  }),
  deliveries: new client.Counter({
    name: 'vigil_deliveries_total', help: 'Alert delivery attempts by channel kind and outcome (delivered, retrying, failed).',
    labelNames: ['channel_kind', 'outcome'] as const, registers: [processRegistry],
  }),
  rateLimitRefusals: new client.Counter({
    name: 'vigil_rate_limit_refusals_total', help: 'Requests refused with 429, by rate-limit bucket.',
    labelNames: ['bucket'] as const, registers: [processRegistry],
  }),
  readCacheHits: new client.Counter({ name: 'vigil_read_cache_hits_total', help: 'Reads answered from the in-process read cache.', registers: [processRegistry] }),
  readCacheMisses: new client.Counter({ name: 'vigil_read_cache_misses_total', help: 'Reads the read cache sent to PostgreSQL.', registers: [processRegistry] }),
};

new client.Gauge({
  name: 'vigil_build_info', help: 'Always 1; the labels say which build runs.', labelNames: ['version', 'node'] as const, registers: [processRegistry],
}).set({ version: process.env.npm_package_version ?? readVersion(), node: process.version }, 1);

function readVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** What one server's scrape-time gauges read. */
export interface ServerSources {
  db: Db;
  pool: pg.Pool;
  /** Unix ms of the scheduler's last look for due work; null when this process runs no worker. */
  lastPollAt: () => number | null;
  /** Whether this process runs the job queue (its depth is read only then, as workers care about it). */
  queue: boolean;
}

/** The metrics of one running server: the process registry plus its own gauges, as one text. */
export function serverMetrics(s: ServerSources): { contentType: string; text(): Promise<string> } {
  const own = new client.Registry();
  new client.Gauge({
    name: 'vigil_db_pool_connections', help: 'Connections of the PostgreSQL pool, by state (in_use, idle).', labelNames: ['state'] as const, registers: [own],
    collect() {
      this.set({ state: 'idle' }, s.pool.idleCount);
      this.set({ state: 'in_use' }, s.pool.totalCount - s.pool.idleCount);
    },
  });
  new client.Gauge({
    name: 'vigil_db_pool_waiting', help: 'Queries waiting for a pool connection.', registers: [own],
    collect() { this.set(s.pool.waitingCount); },
  });
  new client.Gauge({
    name: 'vigil_worker_last_poll_timestamp_seconds', help: 'When the scheduler last looked for due monitors (unix seconds); 0 without a worker.', registers: [own],
    collect() { this.set((s.lastPollAt() ?? 0) / 1000); },
  });
  // The backlog, read once a scrape for both gauges below: how many monitors are past due with no claim, and how late the oldest is.
  let backlog: Promise<{ n: number; late: number }> | null = null;
  const readBacklog = () => (backlog ??= sql<{ n: string; late: number | null }>`select count(*) as n, extract(epoch from now() - min(next_due_at))::float8 as late
      from monitor_schedule where runnable and probe_id is null and next_due_at <= now() and (lease_until is null or lease_until < now())`.execute(s.db)
    .then(({ rows }) => ({ n: Number(rows[0]?.n ?? 0), late: Math.max(0, rows[0]?.late ?? 0) }))
    .finally(() => setTimeout(() => { backlog = null; }, 0)));
  new client.Gauge({
    name: 'vigil_monitors_due_unclaimed', help: 'Monitors past due that no worker has claimed (all workers, from PostgreSQL).', registers: [own],
    async collect() { this.set((await readBacklog()).n); },
  });
  new client.Gauge({
    name: 'vigil_checks_overdue_seconds',
    help: 'How long the oldest unclaimed due monitor has been waiting (0 when none): above a second or two, the workers are over capacity and check the oldest due first.',
    registers: [own],
    async collect() { this.set((await readBacklog()).late); },
  });
  new client.Gauge({
    name: 'vigil_job_queue_depth', help: 'Jobs waiting in the queue (not running, attempts left), by task.', labelNames: ['task'] as const, registers: [own],
    async collect() {
      this.reset();
      const { rows } = await sql<{ task: string; n: string }>`select task_identifier as task, count(*) as n from graphile_worker.jobs
        where locked_at is null and attempts < max_attempts group by 1`.execute(s.db);
      for (const r of rows) this.set({ task: r.task }, Number(r.n));
    },
  });
  return {
    contentType: processRegistry.contentType,
    text: () => client.Registry.merge([processRegistry, own]).metrics(),
  };
}
