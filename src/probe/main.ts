import os from 'node:os';
import { parseArgs } from 'node:util';
import { netPolicyFrom } from '../net/policy';
import { loadConfig } from '../config';
import { runCheck, type CheckJob } from '../engine/runCheck';
import type { CheckResult } from '../engine/kinds/kind';

const VERSION = '0.1.0';

interface WireJob extends Omit<CheckJob, 'lastPingAt' | 'statusSince'> { lastPingAt: string | null; statusSince: string }


/**
 * `npm run probe -- --server URL --token T`: a private probe. It pulls its due
 * monitors from the server, runs them with the same check code as the server's
 * workers (from inside the network it sits in) and posts the results back.
 */
export async function runProbe(opts: { server: string; token: string; concurrency?: number; signal?: AbortSignal; idleMs?: number }): Promise<void> {
  const base = opts.server.replace(/\/+$/, '');
  const net = netPolicyFrom(loadConfig());
  const headers = { authorization: `Bearer ${opts.token}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}/probe/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: opts.signal });
    if (res.status === 401) throw new Error('the server refused this probe token (revoked or unknown)');
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json();
  };
  while (!opts.signal?.aborted) {
    let jobs: WireJob[] = [];
    try {
      jobs = ((await post('/claim', { hostname: os.hostname().slice(0, 255), version: VERSION, max: opts.concurrency ?? 50 })) as { jobs: WireJob[] }).jobs;
      const results = await Promise.all(jobs.map(async (j) => {
        const at = new Date();
        const result: CheckResult | null = await runCheck({ ...j, lastPingAt: j.lastPingAt ? new Date(j.lastPingAt) : null, statusSince: new Date(j.statusSince) }, net, opts.signal);
        return { monitorId: j.id, at: at.toISOString(), result };
      }));
      if (results.length) await post('/results', { results });
    } catch (e) {
      if (opts.signal?.aborted) return;
      if (String((e as Error).message).includes('refused this probe token')) throw e;
      process.stderr.write(`probe: ${(e as Error).message}\n`);
    }
    if (jobs.length === 0) await new Promise((r) => setTimeout(r, opts.idleMs ?? 1000));
  }
}

if (require.main === module) {
  const { values } = parseArgs({ options: { server: { type: 'string' }, token: { type: 'string' }, concurrency: { type: 'string' } } });
  if (!values.server || !values.token) {
    process.stderr.write('Usage: npm run probe -- --server URL --token TOKEN [--concurrency N]\n');
    process.exit(2);
  }
  const stop = new AbortController();
  process.on('SIGINT', () => stop.abort());
  process.on('SIGTERM', () => stop.abort());
  runProbe({ server: values.server, token: values.token, concurrency: Number(values.concurrency) || 50, signal: stop.signal })
    .then(() => process.exit(0), (e) => { process.stderr.write(`probe stopped: ${(e as Error).message}\n`); process.exit(1); });
}
