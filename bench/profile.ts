/**
 * A V8 CPU profile summed into named pieces of a code path, for the
 * benchmarks' BENCH_CPU_PROF (bench/errors-profile.ts and
 * bench/analytics-profile.ts name their pieces). Each sample goes to the
 * innermost frame of its stack that a rule names; the generic rules (HTTP
 * parsing, sockets, promises) only when no frame of the stack matches a rule.
 *
 * Sampled wall time of the main thread: on a machine shared with other work
 * a sample also lands on code whose thread was waiting for a core, so the
 * shares, not the milliseconds, are the figures to read.
 */
import fs from 'node:fs';

interface Node { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }
/** A piece's name and whether a frame (its file, its function) belongs to it. */
export type Rule = [string, (url: string, fn: string) => boolean];

/** Pieces a stack goes to only when none of a summary's rules matches any of its frames. */
export const GENERIC: Rule[] = [
  ['HTTP request parsing (node:_http_*)', (u) => /node:_http_(server|incoming|common)/.test(u)],
  ['sockets and streams (node:net, streams, events)', (u) => /node:net|node:internal\/streams|stream_base_commons|node:events/.test(u)],
  ['promises and timers (microtasks, ticks)', (u, f) => /task_queues|node:internal\/timers/.test(u) || f === '(program)' || f === 'runMicrotasks'],
];

/** Milliseconds by piece, largest first, and the profile's length. */
export function summarize(file: string, rules: Rule[]): { totalMs: number; rows: [string, number][] } {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const pieceOf = new Map<number, string>();
  const piece = (id: number): string => {
    const known = pieceOf.get(id);
    if (known) return known;
    let name = 'other';
    search: for (const list of [rules, GENERIC]) {
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const { url, functionName } = byId.get(cur)!.callFrame;
        const rule = list.find(([, m]) => m(url, functionName));
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
export function profileLines(file: string, rules: Rule[], events?: number): string[] {
  const { totalMs, rows } = summarize(file, rules);
  const busy = rows.filter(([k]) => !k.startsWith('idle')).reduce((a, [, v]) => a + v, 0);
  return [
    `Where the Vigil process's main thread spent the load (${(totalMs / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(1)} s not idle; shares of the sampled time):`,
    ...rows.map(([k, v]) => `  ${((100 * v) / totalMs).toFixed(1).padStart(5)}%  ${Math.round(v).toString().padStart(6)} ms${events ? `  ${((1000 * v) / events).toFixed(0).padStart(5)} ms per 1,000 events` : ''}  ${k}`),
  ];
}

/** `npx tsx bench/<x>-profile.ts <file.cpuprofile> [events]`: prints the summary with `rules`. */
export function profileMain(rules: Rule[], script: string): void {
  const file = process.argv[2];
  if (!file) throw new Error(`usage: npx tsx ${script} <file.cpuprofile> [events]`);
  console.log(profileLines(file, rules, process.argv[3] ? Number(process.argv[3]) : undefined).join('\n'));
}
