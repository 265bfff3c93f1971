/**
 * Child process of `npm run bench:analytics` (bench/analytics.ts): one Vigil
 * server (`startServer`, as `npm start` runs it: API, `POST /api/event` and,
 * with WORKER=true, the worker whose analytics drain counts the buffer) on
 * its own event loop, with an organisation (plan enterprise: raw events are
 * kept 1,095 days, so housekeeping leaves a year of them alone) to create
 * the sites in.
 *
 * Environment (set by the parent): DATABASE_URL, MASTER_KEY, DATA_DIR,
 * WORKER, TRUST_PROXY. Sends `{ type: 'ready', url, pid, apiKey,
 * workspaceId }`; on `{ type: 'stop' }` (or when the parent goes away) it
 * closes the server and exits.
 *
 * Every statement is timed (bench/sqlTiming.ts): `{ type: 'sql' }` answers
 * the top statements since the last ask. `{ type: 'capture', on: true }`
 * (answered with an empty list) also records each statement run from then
 * on with its parameters and wall time (the report's statements, to print
 * them and EXPLAIN them as sent); `{ type: 'capture', on: false }` answers
 * the list and stops recording. `{ type: 'profile', dir }` starts the V8 CPU
 * profiler; `{ type: 'profile', stop: true }` writes what it recorded since
 * to `dir` and answers `{ type: 'profile', file }` (the measured load alone).
 */
import { profileOnMessage } from './lib';
import pg from 'pg';
import { loadConfig } from '../src/config';
import { createOrganization } from '../src/domain/organizations';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';
import { slowestSql, timeSql } from './sqlTiming';

export interface AnalyticsVigilReady { type: 'ready'; url: string; pid: number; apiKey: string; workspaceId: string }
/** One statement as the server sent it. */
export interface Captured { text: string; values: unknown[]; ms: number; at: number }

let capturing: Captured[] | null = null;

/** Records statements with their parameters while `capturing` (on top of sqlTiming's wrapper). */
function captureSql(): void {
  const original = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    if (!capturing) return original.apply(this, args);
    const q = args[0] as string | { text?: string; values?: unknown[] };
    const text = typeof q === 'string' ? q : q?.text ?? '?';
    const values = (typeof q === 'string' ? args[1] : q?.values) as unknown[] | undefined;
    const list = capturing;
    const t = performance.now();
    const out = original.apply(this, args);
    const done = () => list.push({ text, values: values ?? [], ms: performance.now() - t, at: t });
    if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then(done, done);
    return out;
  };
}

async function main(): Promise<void> {
  timeSql();
  captureSql();
  // loadConfig reads some values from process.env itself, so they are set there. The log at npm start's level (info).
  Object.assign(process.env, { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_STORE: 'memory', RATE_LIMIT_READ: '100000000', RATE_LIMIT_WRITE: '100000000', ANALYTICS_EVENTS_PER_SITE_PER_MINUTE: '100000000' });
  const server = await startServer(loadConfig(process.env), createLogger('info'));
  const org = await createOrganization(server.db, { name: 'Bench analytics', ownerEmail: `bench-analytics-${process.pid}@example.test`, plan: 'enterprise' });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
  };
  const profile = profileOnMessage('analytics-vigil');
  process.on('message', (m: { type?: string; on?: boolean; dir?: string; stop?: boolean }) => {
    if (profile(m)) return;
    if (m?.type === 'stop') stop();
    if (m?.type === 'sql') process.send!({ type: 'sql', top: slowestSql(80, true) });
    if (m?.type === 'capture') {
      if (m.on) {
        capturing = [];
        process.send!({ type: 'capture', list: [] });
      } else {
        const list = capturing ?? [];
        capturing = null;
        process.send!({ type: 'capture', list });
      }
    }
  });
  process.on('disconnect', stop);
  process.send!({ type: 'ready', url: server.url, pid: process.pid, apiKey: org.apiKey, workspaceId: org.workspaceId } satisfies AnalyticsVigilReady);
}

main().catch((e) => { console.error('analytics-vigil:', e); process.exit(1); });
