import { sql } from 'kysely';
import type { Db } from '../db/connect';

const made = new Set<string>();

function monthKey(d: Date): string {
  return `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** Creates the monthly partition of check_results holding `d`, if missing. */
async function ensureMonth(db: Db, d: Date): Promise<void> {
  const key = monthKey(d);
  if (made.has(key)) return;
  const from = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const to = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  try {
    await sql`create table if not exists ${sql.table(`check_results_${key}`)} partition of check_results
      for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`.execute(db);
  } catch (e) {
    // Another worker created it between our check and our create.
    if (!/already exists/.test(String((e as Error).message))) throw e;
  }
  made.add(key);
}

/** Ensures partitions exist for every month among `dates` (cached per process). */
export async function ensurePartitionFor(db: Db, dates: Date[]): Promise<void> {
  const months = new Map(dates.map((d) => [monthKey(d), d]));
  for (const d of months.values()) await ensureMonth(db, d);
}

/** Creates this month's and the next two months' partitions ahead of need. */
export async function ensureUpcomingPartitions(db: Db, now = new Date()): Promise<void> {
  for (let i = 0; i < 3; i++) await ensureMonth(db, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + i, 1)));
}

/** Drops monthly partitions wholly older than `days` (the longest retention of any plan). */
export async function dropPartitionsOlderThan(db: Db, days: number, now = new Date()): Promise<void> {
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const rows = await sql<{ name: string }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    join pg_class p on p.oid = i.inhparent where p.relname = 'check_results'`.execute(db);
  for (const { name } of rows.rows) {
    const m = /^check_results_(\d{4})(\d{2})$/.exec(name);
    if (!m) continue;
    const end = new Date(Date.UTC(Number(m[1]), Number(m[2]), 1));
    if (end <= cutoff) {
      await sql`drop table if exists ${sql.table(name)}`.execute(db);
      made.delete(`${m[1]}${m[2]}`);
    }
  }
}
