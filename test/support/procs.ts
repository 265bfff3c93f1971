import fs from 'node:fs';

// The machine's process table, read from /proc: which processes a test left behind.

interface Proc { pid: number; ppid: number; pgrp: number; state: string }

function table(): Proc[] {
  const out: Proc[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
      const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(entry), ppid: Number(ppid), pgrp: Number(pgrp), state });
    } catch { /* gone meanwhile */ }
  }
  return out;
}

/** Every process below `pid` (children, grandchildren, …). */
export function descendants(pid: number): number[] {
  const procs = table();
  const out: number[] = [];
  const walk = (p: number) => { for (const c of procs) if (c.ppid === p) { out.push(c.pid); walk(c.pid); } };
  walk(pid);
  return out;
}

/** The live (not zombie) processes whose environment holds `entry` (`NAME=value`, exactly). */
export function processesWith(entry: string): number[] {
  return table().filter((p) => p.state !== 'Z' && environ(p.pid).includes(entry)).map((p) => p.pid);
}

function environ(pid: number): string[] {
  try { return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0'); } catch { return []; }
}

/** The live (not zombie) processes of process group `pgid`, wherever they were reparented. */
export function groupMembers(pgid: number): number[] {
  return table().filter((p) => p.pgrp === pgid && p.state !== 'Z').map((p) => p.pid);
}

/** The command line of a process, for messages ('' once it is gone). */
export function commandLine(pid: number): string {
  try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim(); } catch { return ''; }
}

/** Whether a process exists (a zombie counts until reaped). */
export function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}
