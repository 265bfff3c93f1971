import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { newId } from '../src/crypto/ids';
import { queueDeliveries } from '../src/alerting/dispatch';
import { freeDeadWorkers } from '../src/jobs/liveness';
import { migrateQueue } from '../src/jobs/queue';
import { createLogger } from '../src/log';
import { ok, until } from './support/expect';
import { freshDatabase, startTestServer, type TestServer } from './support/harness';
import { startWorkerChild } from './support/child';

// A queue worker killed with SIGKILL (an OOM kill, an eviction, a power cut)
// while deliveries are in flight and more wait in its local queue: another
// worker runs all of them within about half a minute instead of graphile-
// worker's four hours. Alerts are sent at least once: one in flight at the
// kill may reach its receiver twice, always with the same delivery id;
// none is lost, and none that had not been sent is sent twice.

const MASTER_KEY = Buffer.alloc(32, 7).toString('base64');

describe('freeing the jobs of dead workers', () => {
  let database: { url: string; drop: () => Promise<void> };
  let pool: pg.Pool;
  beforeAll(async () => {
    database = await freshDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 6 });
    pool.on('error', () => undefined);
    await migrateQueue(pool, createLogger('silent'));
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  test('dead heartbeats and unnamed old locks are freed, live workers\' jobs are not; two workers at once free each once', async () => {
    const job = async (lockedBy: string, ageSeconds: number) => {
      const { rows } = await pool.query<{ id: string }>(`select id from graphile_worker.add_job('deliver', '{}'::json)`);
      await pool.query('update graphile_worker._private_jobs set locked_by = $1, locked_at = now() - make_interval(secs => $2) where id = $3', [lockedBy, ageSeconds, rows[0].id]);
      return rows[0].id;
    };
    const jobs = {
      dead: [await job('pool-dead', 5), await job('pool-dead', 5)],
      live: [await job('pool-live', 600), await job('pool-live', 5)],
      unknownOld: [await job('pool-unknown-old', 120)],
      unknownNew: [await job('pool-unknown-new', 5)],
    };
    await pool.query(`insert into queue_workers (id, worker_ids, host, pid, heartbeat_at) values
      ('pool-dead', '{pool-dead,worker-dead-1}', 'h', 1, now() - interval '30 seconds'),
      ('pool-live', '{pool-live}', 'h', 2, now() - interval '3 seconds')`);

    const [a, b] = await Promise.all([
      freeDeadWorkers(pool, ['pool-a'], { staleSeconds: 20, unknownLockSeconds: 60 }),
      freeDeadWorkers(pool, ['pool-b'], { staleSeconds: 20, unknownLockSeconds: 60 }),
    ]);
    // The dead row is taken by one of the two; an unnamed lock may be freed by both (it is idempotent).
    expect([...a, ...b].filter((id) => id === 'pool-dead')).toHaveLength(1);
    expect(new Set([...a, ...b])).toEqual(new Set(['pool-dead', 'worker-dead-1', 'pool-unknown-old']));

    const { rows } = await pool.query<{ id: string; locked_by: string | null }>('select id, locked_by from graphile_worker.jobs');
    const lock = new Map(rows.map((r) => [r.id, r.locked_by]));
    for (const id of [...jobs.dead, ...jobs.unknownOld]) expect(lock.get(id)).toBeNull();
    for (const id of jobs.live) expect(lock.get(id)).toBe('pool-live');
    for (const id of jobs.unknownNew) expect(lock.get(id)).toBe('pool-unknown-new');
    const { rows: workers } = await pool.query<{ id: string }>('select id from queue_workers order by id');
    expect(workers.map((w) => w.id)).toEqual(['pool-live']);
  });
});

describe('kill -9 of a worker with deliveries in flight and prefetched', () => {
  let server: TestServer;
  let receiver: http.Server;
  let receiverUrl: string;
  let holding = true;
  const held: http.ServerResponse[] = [];
  const arrivals: { path: string; delivery: string; at: number }[] = [];

  beforeAll(async () => {
    // Holds every request open while `holding`: the worker's deliveries stay in flight until it is killed.
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        arrivals.push({ path: req.url ?? '', delivery: String(req.headers['vigil-delivery']), at: Date.now() });
        if (holding) held.push(res);
        else res.end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    // The API only: the queue runs in the worker processes this test starts and kills.
    server = await startTestServer({ WORKER: 'false', MASTER_KEY, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  });
  afterAll(async () => {
    await server.close();
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
  });

  test('a new worker delivers every alert within a minute; only those in flight go twice, with the same delivery id', async () => {
    const org = await server.org({ plan: 'enterprise' });
    const api = server.api(org.apiKey);
    const channels: string[] = [];
    for (let i = 0; i < 40; i++) {
      channels.push(ok('createChannel', await api.post('/channels', { kind: 'webhook', name: `hook ${i}`, target: `${receiverUrl}/hook/${i}`, workspaceId: org.workspaceId }), 201).id);
    }
    const incidentId = newId('inc');
    await server.db.insertInto('incidents').values({
      id: incidentId, organization_id: org.organizationId, workspace_id: org.workspaceId, monitor_id: null,
      title: 'API is down', cause: 'assertion_failed', severity: 'critical', status: 'open',
    }).execute();
    // 40 alerts queued before any worker runs: the first worker fetches 32 (24 run, 8 wait in its local queue).
    await queueDeliveries(server.db, { id: incidentId, organization_id: org.organizationId }, 'incident.opened', channels);
    const deliveries = await server.db.selectFrom('deliveries').select(['id', 'channel_id']).where('incident_id', '=', incidentId).execute();
    const deliveryOf = new Map(deliveries.map((d) => [`/hook/${channels.indexOf(d.channel_id!)}`, d.id]));
    expect(deliveryOf.size).toBe(40);

    const env = { DATABASE_URL: server.databaseUrl, MASTER_KEY };
    const a = await startWorkerChild(env);
    await until('24 deliveries in flight', async () => arrivals.length >= 24, 60_000);
    const locked = () => lockedJobs(server.databaseUrl);
    await until('32 jobs locked by the worker (24 running, 8 prefetched)', async () => (await locked()).length === 32, 15_000);
    const atKill = await locked();
    const { rows: heartbeats } = await query(server.databaseUrl, 'select id, worker_ids from queue_workers');
    expect(heartbeats).toHaveLength(1);
    expect(new Set(atKill.map((j) => j.locked_by))).toEqual(new Set([heartbeats[0].id]));
    const inFlight = new Set(arrivals.map((r) => r.path));
    expect(inFlight.size).toBe(24);
    const prefetched = atKill.map((j) => j.delivery_id).filter((id) => ![...inFlight].some((p) => deliveryOf.get(p) === id));
    expect(prefetched).toHaveLength(8);

    a.child.kill('SIGKILL');
    await a.exited;
    const killedAt = Date.now();
    holding = false;
    for (const res of held.splice(0)) res.end('{"ok":true}');

    const b = await startWorkerChild(env);
    const bStarted = Date.now();
    await until('every alert delivered', async () => {
      const { n } = await server.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('incident_id', '=', incidentId).where('status', '=', 'delivered').executeTakeFirstOrThrow();
      return Number(n) === 40;
    }, 90_000);
    // Freed once the dead worker's heartbeat is 20 s old (it beat every 5 s until the kill), then run at once.
    expect({ secondsAfterNewWorker: Math.round((Date.now() - bStarted) / 1000) < 60, secondsAfterKill: Math.round((Date.now() - killedAt) / 1000) })
      .toMatchObject({ secondsAfterNewWorker: true });
    const freedLine = b.output().split('\n').find((l) => l.includes('freed the jobs of queue workers that stopped heartbeating'));
    expect(freedLine).toContain(heartbeats[0].id);

    // Every alert arrived, each with its own delivery id on every arrival.
    const byPath = new Map<string, string[]>();
    for (const r of arrivals) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r.delivery]);
    expect(byPath.size).toBe(40);
    for (const [path, ids] of byPath) expect({ path, ids: [...new Set(ids)] }).toEqual({ path, ids: [deliveryOf.get(path)] });
    // Only an alert in flight at the kill went twice; the prefetched and the never-fetched ones went once.
    for (const [path, ids] of byPath) if (!inFlight.has(path)) expect({ path, times: ids.length }).toEqual({ path, times: 1 });
    for (const id of prefetched) expect(arrivals.filter((r) => r.delivery === id)).toHaveLength(1);

    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    // A worker that stops cleanly takes its heartbeat with it.
    expect((await query(server.databaseUrl, 'select id from queue_workers')).rows).toEqual([]);
  }, 240_000);
});

async function query(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try { return await client.query(text, values); } finally { await client.end(); }
}

/** The queue's locked jobs: who holds each and which delivery it is. */
async function lockedJobs(url: string): Promise<{ locked_by: string; delivery_id: string }[]> {
  return (await query(url, `select locked_by, payload->>'deliveryId' as delivery_id from graphile_worker._private_jobs where locked_by is not null`)).rows;
}
