/**
 * CPU accounting of the benchmarks from /proc (Linux): one process, every
 * PostgreSQL process split by database, and the whole machine. Used by
 * bench/checks.ts (and bench/alerts-lib.ts, through bench/checks-lib.ts).
 */
import { execSync } from 'node:child_process';
import fs from 'node:fs';

let tick = 0;
const clk = () => (tick ||= Number(execSync('getconf CLK_TCK').toString().trim()) || 100);

function stat(pid: string | number): { comm: string; ppid: number; self: number; children: number } | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    const f = (k: number) => Number(rest[k - 3]); // field k of proc(5), 1-based
    return { comm: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')), ppid: f(4), self: (f(14) + f(15)) / clk(), children: (f(16) + f(17)) / clk() };
  } catch {
    return null; // gone
  }
}

/** CPU seconds (user + system) of one process, 0 when it is gone. */
export function processCpu(pid: number): number {
  return stat(pid)?.self ?? 0;
}

/** CPU seconds of each PostgreSQL process at one moment (see `postgresDelta`). */
export type PgSnapshot = Map<number, { cpu: number; of: 'own' | 'backend' | 'other' }>;

/**
 * Snapshot of every process named postgres: `backend` = a session (or
 * autovacuum worker) of `database`, `own` = a shared background process (WAL
 * writer, checkpointer, ...), `other` = other databases' sessions (tests
 * sharing the server) and the postmaster, with what it collected from exited children.
 */
export function postgresSnapshot(database: string): PgSnapshot {
  const all = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map((p) => ({ pid: Number(p), s: stat(p) }));
  const pg = all.filter((p) => p.s?.comm === 'postgres');
  const pids = new Set(pg.map((p) => p.pid));
  const out: PgSnapshot = new Map();
  for (const { pid, s } of pg) {
    let cmd = '';
    try { cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim(); } catch { continue; }
    // Backends: "postgres: 15/main: <user> <db> <host(port)> <state>"; autovacuum: "... autovacuum worker <db>".
    const db = /^postgres: \S+: \S+ (\S+) (?:\S+\(\d+\)|\[local\])/.exec(cmd)?.[1] ?? /autovacuum worker (\S+)/.exec(cmd)?.[1];
    const postmaster = !pids.has(s!.ppid);
    out.set(pid, { cpu: s!.self + (postmaster ? s!.children : 0), of: postmaster || (db !== undefined && db !== database) ? 'other' : db ? 'backend' : 'own' });
  }
  return out;
}

/** CPU seconds so far of PostgreSQL as `postgresDelta` splits it (from an empty snapshot; bench/alerts-lib.ts uses `own`). */
export function postgresCpu(database: string): { all: number; own: number; backends: number } {
  return postgresDelta(new Map(), postgresSnapshot(database));
}

/**
 * PostgreSQL CPU seconds between two snapshots, process by process (a process
 * that exited in between loses its share of the window; one that started
 * counts from zero): `backends` of the database, `own` = those plus the
 * shared background processes, `all` = every postgres process.
 */
export function postgresDelta(a: PgSnapshot, b: PgSnapshot): { all: number; own: number; backends: number } {
  const d = { all: 0, own: 0, backends: 0 };
  for (const [pid, x] of b) {
    const t = x.cpu - (a.get(pid)?.cpu ?? 0);
    d.all += t;
    if (x.of !== 'other') d.own += t;
    if (x.of === 'backend') d.backends += t;
  }
  return d;
}

/** CPU seconds the whole machine spent busy (all cores), from /proc/stat. */
export function machineBusy(): number {
  const [, ...v] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = v;
  return (user + nice + system + irq + softirq + (steal ?? 0)) / clk();
}
