/**
 * Helpers of the check-engine benchmark (bench/checks.ts): its database, the
 * seeding of N http monitors, vacuuming in autovacuum's stead, and the
 * markdown table (CPU accounting is in bench/checks-cpu.ts, re-exported here).
 */
import { sql } from 'kysely';
import pg from 'pg';
import { createSecretBox } from '../src/crypto/secrets';
import { newId } from '../src/crypto/ids';
import { connectDb } from '../src/db/connect';
import { migrateToLatest } from '../src/db/migrate';
import { createOrganization } from '../src/domain/organizations';

export { machineBusy, postgresCpu, postgresDelta, postgresSnapshot, processCpu, type PgSnapshot } from './checks-cpu';

const LOCAL_ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: LOCAL_ADMIN, connectionTimeoutMillis: 3000 });
  try { await c.connect(); await c.query(statement); } finally { await c.end().catch(() => undefined); }
}

/** BENCH_DATABASE_URL (left as is; the run's monitors are deleted at the end), else a fresh local database dropped at the end. */
export async function checksDatabase(tag: string): Promise<{ url: string; name: string; label: string; fresh: boolean; drop(): Promise<void> }> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given) return { url: given, name: new URL(given).pathname.slice(1), label: 'BENCH_DATABASE_URL', fresh: false, drop: async () => undefined };
  const name = `vigil_bench_checks_${process.pid}_${tag}`;
  await admin(`create database ${name}`);
  const u = new URL(LOCAL_ADMIN);
  u.pathname = `/${name}`;
  return { url: u.toString(), name, label: `local PostgreSQL (${name})`, fresh: true, drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/**
 * Migrates, creates an enterprise organisation and inserts `n` http monitors
 * on `${target}/m/<i>`, due one day from now, spread evenly over one interval
 * (`shiftSchedule` later moves them to start when the worker is up).
 */
export async function seedMonitors(url: string, masterKey: Buffer, n: number, interval: number, target: string) {
  const { db } = connectDb(url, 2);
  try {
    await migrateToLatest(db);
    const org = await createOrganization(db, { name: 'Bench checks', ownerEmail: `bench-checks-${process.pid}@example.test`, plan: 'enterprise' });
    const secrets = createSecretBox(masterKey);
    const base = Date.now() + 86_400_000;
    for (let i = 0; i < n; i += 1000) {
      const rows = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({
        id: newId('mon'), organization_id: org.organizationId, workspace_id: org.workspaceId, name: `bench ${i + k}`, kind: 'http',
        config_enc: secrets.seal(JSON.stringify({ url: `${target}/m/${i + k}` })), interval_seconds: interval,
      }));
      await db.insertInto('monitors').values(rows).execute();
      // The schedule's trigger made them due now: spread them over one interval, a day ahead.
      await sql`update monitor_schedule s set next_due_at = v.due from unnest(${rows.map((r) => r.id)}::text[],
          ${rows.map((_, k) => new Date(base + Math.floor(((i + k) * interval * 1000) / n)).toISOString())}::timestamptz[]) as v(id, due)
        where s.monitor_id = v.id`.execute(db);
    }
    return { organizationId: org.organizationId, base };
  } finally {
    await db.destroy();
  }
}

/** Moves the seeded schedule so that the first monitor is due at `start`. */
export async function shiftSchedule(c: pg.Client, organizationId: string, base: number, start: number): Promise<void> {
  await c.query(`update monitor_schedule set next_due_at = next_due_at - make_interval(secs => $2)
    where monitor_id in (select id from monitors where organization_id = $1)`,
    [organizationId, (base - start) / 1000]);
}

/** Results stored with `at` in [from, to). */
export async function storedBetween(c: pg.Client, organizationId: string, from: number, to: number): Promise<number> {
  const r = await c.query(`select count(*)::int as n from check_results where organization_id = $1 and at >= $2 and at < $3`,
    [organizationId, new Date(from), new Date(to)]);
  return r.rows[0].n as number;
}

/** Results stored in each `windowMs` slice of [from, to): the fewest and the most (a slice with none counts as 0: a stall shows). */
export async function storedPerWindow(c: pg.Client, organizationId: string, from: number, to: number, windowMs: number): Promise<{ min: number; max: number }> {
  const r = await c.query(`select floor(extract(epoch from at - $2::timestamptz) * 1000 / $4)::int as w, count(*)::int as n from check_results
    where organization_id = $1 and at >= $2 and at < $3 group by 1`, [organizationId, new Date(from), new Date(to), windowMs]);
  const counts = Array.from({ length: Math.floor((to - from) / windowMs) }, () => 0);
  for (const row of r.rows as { w: number; n: number }[]) if (row.w < counts.length) counts[row.w] = row.n;
  return { min: Math.min(...counts), max: Math.max(...counts) };
}

/** The monitors table's health after a run: dead row versions, share of HOT updates, vacuums (auto or not), size. */
export async function monitorsTable(c: pg.Client): Promise<string> {
  const r = (await c.query(`select n_dead_tup as dead, n_tup_hot_upd::float8 / nullif(n_tup_upd, 0) as hot, autovacuum_count + vacuum_count as av,
    pg_total_relation_size('monitors') as size from pg_stat_user_tables where relname = 'monitors'`)).rows[0];
  return `monitors table: ${r.dead} dead row versions, ${Math.round(100 * (r.hot ?? 0))}% HOT updates, ${r.av} vacuums, ${(Number(r.size) / 2 ** 20).toFixed(0)} MB`;
}

/**
 * Stands in for autovacuum, which a production server runs but a test server
 * may not (`autovacuum = off`: then the tables are never analysed nor vacuumed,
 * and the claim's index scan wades through every dead row version). Every
 * BENCH_VACUUM seconds (default 60, autovacuum's naptime, when the server has
 * autovacuum off; else 0 = never), and once at once, runs `vacuum (analyze)`
 * on the tables the worker updates, until the returned stop is called.
 */
export async function vacuumEvery(c: pg.Client): Promise<{ seconds: number; stop(): Promise<void> }> {
  const off = (await c.query('show autovacuum')).rows[0].autovacuum === 'off';
  const seconds = Number(process.env.BENCH_VACUUM ?? (off ? 60 : 0));
  if (!seconds) return { seconds, stop: async () => undefined };
  const vacuum = () => c.query('vacuum (analyze) monitors, rollup_hourly, rollup_daily').then(() => undefined, (e) => console.error(`vacuum: ${e.message}`));
  let running = vacuum();
  await running;
  const timer = setInterval(() => { running = running.then(vacuum); }, seconds * 1000);
  return { seconds, stop: async () => { clearInterval(timer); await running; } };
}

/** One benchmark run, as the table shows it. */
export interface RunRow {
  n: number; interval: number; concurrency: number; checksPerSec: number; p50: number; p99: number;
  workerPer1k: number; pgPer1k: number; rssMb: number; missed: number; late: number; bare: number | null;
}

/** A number for people (en-US grouping); '–' for none (NaN, or null as NaN arrives over IPC). */
export const fmt = (x: number | null, d = 0) => (x === null || Number.isNaN(x) ? '–' : x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));

/** True when the run meets the target: p99 lag under 2 s and no check missed. */
export const meets = (r: RunRow) => r.p99 < 2000 && r.missed === 0;

/** The README table of all runs. */
export function checksTable(rows: RunRow[]): string {
  const out = [
    '| Monitors | Interval | Concurrency | Checks/s | p50 lag (ms) | p99 lag (ms) | Worker CPU s / 1k checks | PostgreSQL CPU s / 1k | Total vs bare client | Worker RSS (MB) | Missed | Target met |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|',
  ];
  for (const r of rows) {
    const total = r.workerPer1k + r.pgPer1k;
    out.push(`| ${fmt(r.n)} | ${r.interval} s | ${r.concurrency} | ${fmt(r.checksPerSec, 1)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.workerPer1k, 3)} | ` +
      `${fmt(r.pgPer1k, 3)} | ${r.bare ? `${fmt(total / r.bare, 1)}×` : '–'} | ${fmt(r.rssMb)} | ${fmt(r.missed)}${r.late ? ` (${fmt(r.late)} late > interval)` : ''} | ${meets(r) ? 'yes' : 'no'} |`);
  }
  return out.join('\n');
}
