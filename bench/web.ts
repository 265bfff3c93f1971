/**
 * Web app benchmark — `npm run bench:web`.
 *
 * An organisation with 10,000 monitors (BENCH_MONITORS), created through the
 * API with the limits raised, on a server without a worker (no check runs,
 * so nothing changes while it is measured). Debian's Chromium, headless,
 * signed in as the owner, measures:
 *
 * - the JavaScript and CSS a first visit downloads (raw, and gzipped as a
 *   compressing proxy or a precompressed file would send it);
 * - time until the overview is interactive (navigation to its monitors on
 *   screen) and the monitors list (navigation to its first row; then a jump
 *   to the last of 10,000 rows);
 * - the tab's JavaScript heap after both;
 * - the reads (GET /api/v1/…) an opened overview costs, and an idle minute
 *   (BENCH_IDLE_SECONDS, 60) of the open tab;
 * - the round trips of pausing a monitor from its page (click → Resume shown)
 *   and of acknowledging an incident from its page (click → Acknowledged shown);
 *   the incident is opened by the engine's own result write (writeResults), as
 *   a failed check would, since this server runs no checks.
 *
 * Goals (issue 26): interactive under 1 s, first visit ≤ 200 KB gzipped,
 * a few reads per overview, none while idle.
 */
import { gzipSync } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { loadConfig } from '../src/config';
import { createOrganization, setPassword } from '../src/domain/organizations';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';
import { writeResults } from '../src/engine/results';
import type { Db } from '../src/db/connect';
import { api, benchDatabase, machine } from './lib';

const MONITORS = Number(process.env.BENCH_MONITORS || 10_000);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS || 60);
const PASSWORD = 'bench web password 1';

async function seed(v: { url: string; apiKey: string }, workspaces: string[]): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < MONITORS; i = next++) {
      const m = await api<{ id: string }>(v, 'POST', '/monitors', {
        name: `Service ${String(i).padStart(5, '0')}`, kind: 'http', workspaceId: workspaces[i % workspaces.length], intervalSeconds: 86_400,
        config: JSON.stringify({ url: `http://127.0.0.1:9/${i}` }), tags: [i % 2 ? 'odd' : 'even'],
      });
      ids.push(m.id);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return ids;
}

/** A failed check of `monitorId` written as the engine writes it (as many as its confirmations need): its incident's id. */
async function openIncident(db: Db, monitorId: string): Promise<string> {
  for (;;) {
    const m = await db.selectFrom('monitors').select(['id', 'organization_id', 'workspace_id', 'name', 'kind', 'status', 'consecutive_failures',
      'confirmations', 'depends_on', 'interval_seconds']).where('id', '=', monitorId).executeTakeFirstOrThrow();
    const inc = await db.selectFrom('incidents').select('id').where('monitor_id', '=', monitorId).executeTakeFirst();
    if (inc) return inc.id;
    await writeResults(db, [{ monitor: m, at: new Date(), nextDueAt: new Date(Date.now() + 86_400_000),
      result: { outcome: 'down', cause: 'connection_failed', message: 'connection refused', responseTimeMs: null } }]);
  }
}

async function main(): Promise<void> {
  execFileSync(process.execPath, [path.join(__dirname, '../scripts/run/build.mjs'), '--web-if-stale'], { stdio: 'inherit' });
  const db = await benchDatabase();
  const server = await startServer(loadConfig({
    ...process.env, DATABASE_URL: db.url, DATA_DIR: path.join(__dirname, '../data/bench-web'), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent',
    RATE_LIMIT_STORE: 'memory', RATE_LIMIT_READ: '100000000', RATE_LIMIT_WRITE: '100000000', WORKER: 'false',
  }), createLogger('silent'));
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] });
  try {
    const email = `bench-web-${process.pid}@example.test`;
    const org = await createOrganization(server.db, { name: 'Bench web', ownerEmail: email, plan: 'enterprise' });
    await setPassword(server.db, email, PASSWORD);
    const v = { url: server.url, apiKey: org.apiKey };
    const extra = await Promise.all(['Platform', 'Payments', 'Edge'].map((name) => api<{ id: string }>(v, 'POST', '/workspaces', { name })));
    const t0 = Date.now();
    const ids = await seed(v, [org.workspaceId, ...extra.map((w) => w.id)]);
    console.log(`seeded ${ids.length} monitors in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const reads: string[] = [];
    // The stream's connection attempts, apart: one per opened tab when the server has it (and only a retry when refused).
    const streams: string[] = [];
    const assets = new Map<string, Buffer>();
    page.on('request', (r) => {
      const p = new URL(r.url()).pathname;
      if (r.method() !== 'GET' || !p.startsWith('/api/v1/')) return;
      (p === '/api/v1/stream' ? streams : reads).push(p);
    });
    page.on('response', async (r) => {
      if (/\.(js|css)$/.test(new URL(r.url()).pathname)) assets.set(new URL(r.url()).pathname, await r.body().catch(() => Buffer.alloc(0)));
    });
    await page.goto(`${server.url}/sign-in`);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('link', { name: 'Service 00000', exact: true }).waitFor({ timeout: 60_000 });
    const firstVisit = [...assets.values()];
    const raw = firstVisit.reduce((n, b) => n + b.length, 0);
    const gz = firstVisit.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0);

    // A fresh load of the overview (warm HTTP cache, as a returning tab), and its reads.
    reads.length = 0;
    streams.length = 0;
    let start = Date.now();
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Service 00000', exact: true }).waitFor({ timeout: 60_000 });
    const overviewMs = Date.now() - start;
    await page.getByRole('img', { name: /Service 00000: uptime/ }).waitFor({ timeout: 60_000 });
    const overviewWithSparksMs = Date.now() - start;
    const overviewReads = [...reads];
    const overviewStreams = streams.length;

    reads.length = 0;
    streams.length = 0;
    await page.waitForTimeout(IDLE_SECONDS * 1000);
    const idleReads = [...reads];
    const idleStreams = streams.length;

    start = Date.now();
    await page.goto(`${server.url}/monitors`);
    await page.getByRole('table', { name: 'Monitors' }).getByRole('link', { name: 'Service 00000', exact: true }).waitFor({ timeout: 60_000 });
    const listMs = Date.now() - start;
    start = Date.now();
    await page.getByRole('table', { name: 'Monitors' }).locator('.scroller').evaluate((el) => { el.scrollTop = el.scrollHeight; });
    const last = `Service ${String(MONITORS - 1).padStart(5, '0')}`;
    await page.getByRole('table', { name: 'Monitors' }).getByRole('link', { name: last, exact: true }).waitFor();
    const scrollMs = Date.now() - start;
    start = Date.now();
    await page.getByLabel('Search by name').fill(last.slice(0, -1)); // the last ten
    await page.getByText(/^10 of \d+ monitors$/).waitFor();
    const searchMs = Date.now() - start;
    const rowsInDom = await page.getByRole('table', { name: 'Monitors' }).getByRole('row').count();

    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    await cdp.send('HeapProfiler.collectGarbage');
    const { metrics } = await cdp.send('Performance.getMetrics') as { metrics: Array<{ name: string; value: number }> };
    const heap = metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0;

    await page.goto(`${server.url}/monitors/${ids[0]}`);
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    start = Date.now();
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    const pauseMs = Date.now() - start;

    const incidentId = await openIncident(server.db, ids[1]);
    await page.goto(`${server.url}/incidents/${incidentId}`);
    await page.getByRole('button', { name: 'Acknowledge' }).waitFor();
    start = Date.now();
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    await page.getByRole('button', { name: 'Acknowledge' }).waitFor({ state: 'detached' });
    const ackMs = Date.now() - start;

    // The read the overview and the list wait for, alone: how much of their time is the server's.
    const apiTimes: number[] = [];
    let apiBytes = 0;
    for (let i = 0; i < 3; i++) {
      const t = Date.now();
      const res = await fetch(`${server.url}/api/v1/monitors`, { headers: { authorization: `Bearer ${org.apiKey}`, 'accept-encoding': 'gzip' } });
      apiBytes = (await res.arrayBuffer()).byteLength;
      apiTimes.push(Date.now() - t);
    }

    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    console.log(`\nWeb app, ${MONITORS} monitors — ${machine(db.label)}`);
    console.log(`first visit JS+CSS: ${firstVisit.length} files, ${kb(raw)} raw, ${kb(gz)} gzipped (goal ≤ 200 KB)`);
    console.log(`overview interactive: ${overviewMs} ms (monitors on screen; goal < 1000 ms), with sparklines: ${overviewWithSparksMs} ms`);
    console.log(`reads per opened overview: ${overviewReads.length} (${overviewReads.join(', ')}) + ${overviewStreams} stream connection`);
    console.log(`reads per idle ${IDLE_SECONDS} s: ${idleReads.length}${idleReads.length ? ` (${idleReads.join(', ')})` : ''}; stream connection attempts: ${idleStreams} (retries of a refused stream only)`);
    console.log(`monitors list interactive: ${listMs} ms; to the last row: ${scrollMs} ms; search: ${searchMs} ms; rows in the page: ${rowsInDom}`);
    console.log(`tab JS heap after overview and list: ${(heap / 2 ** 20).toFixed(1)} MiB`);
    console.log(`pause round trip (click → Resume shown): ${pauseMs} ms`);
    console.log(`acknowledge round trip (click → acknowledged shown): ${ackMs} ms`);
    console.log(`GET /api/v1/monitors alone (${MONITORS} monitors): ${apiTimes.join(' / ')} ms, ${kb(apiBytes)} of JSON`);
  } finally {
    await browser.close();
    await server.close();
    await db.drop();
  }
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
