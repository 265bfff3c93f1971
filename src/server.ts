import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import { createSecretBox, loadMasterKey } from './crypto/secrets';
import { connectDb, ensureDatabase, type Db } from './db/connect';
import { startEmbedded, type EmbeddedServer } from './db/embedded';
import { migrateToLatest } from './db/migrate';
import { startChangeFeed, type ChangeFeed } from './db/changeFeed';
import { bootstrapOrganization } from './domain/organizations';
import { handlers } from './api';
import { createLogger, type Logger } from './log';
import { createRateLimits, type RateLimits } from './pipeline/ratelimit';
import { createRunner } from './pipeline/run';
import type { Services } from './pipeline/context';
import { createApp } from './transport/app';
import { answerClientError } from './transport/respond';
import { trackConnections } from './transport/drain';
import { withPingFastPath } from './transport/ping';
import { startWorker, type Worker } from './engine/worker';
import { netPolicyFrom } from './net/policy';
import { migrateQueue } from './jobs/queue';
import { startJobs } from './jobs/tasks';
import { startGrouper } from './errors/grouper';
import { startAnalyticsDrain } from './analytics/drain';
import { withEventFastPath } from './analytics/ingest';
import { withErrorFastPath } from './errors/ingest';
import { startTrafficJudge } from './analytics/traffic';
import { startPingDrain } from './ingest/pings';
import { startAgentDrain } from './ingest/agents';
import type { PageCache } from './statuspages/cache';
import { StreamHub } from './stream/hub';
import { ownerSetupToken } from './people/sessions';

/** A running Vigil process (role serve). */
export interface RunningServer {
  url: string;
  db: Db;
  /** The owner key printed on the first start of an empty database, else null. */
  bootstrapKey: string | null;
  /** The first owner's one-time link (set the password, land signed in; 24 h, once), printed with the key; else null. */
  ownerSetupUrl: string | null;
  /** How often public status pages were read from the database (each visit otherwise comes from memory). */
  statusPageLoads(): number;
  close(): Promise<void>;
}

/** Where the database is: the configured URL, or an embedded server started now (handed to `opened` at once). */
async function openDatabase(config: Config, log: Logger, opened: (e: EmbeddedServer) => void): Promise<string> {
  if (config.databaseUrl) return config.databaseUrl;
  const embedded = await startEmbedded(config.dataDir, log);
  opened(embedded);
  await ensureDatabase(embedded.url('postgres'), 'vigil');
  return embedded.url('vigil');
}

/** The listen error in one line an operator can act on (the port or address and what to set). */
function listenError(e: NodeJS.ErrnoException, config: Config): Error {
  if (e.code === 'EADDRINUSE') return new Error(`port ${config.port} is already in use (EADDRINUSE); set PORT to a free port`);
  if (e.code === 'EACCES') return new Error(`port ${config.port} needs privileges this process lacks (EACCES); set PORT to 1024 or above`);
  if (e.code === 'EADDRNOTAVAIL') return new Error(`HOST ${config.host} is not an address of this machine (EADDRNOTAVAIL); set HOST`);
  return new Error(`cannot listen on ${config.host}:${config.port}: ${e.message}`);
}

/** What a background part of the process needs to stop. */
interface Stoppable { stop(): Promise<unknown> }

/**
 * Starts the API: database, migrations, first-start bootstrap, the HTTP
 * listener, then (with WORKER) the background work. Should any step fail,
 * everything already started — listener, worker, job runner, drains, change
 * feed, pool, embedded PostgreSQL — is stopped before the error is thrown,
 * by the same path `close()` takes; nothing keeps running behind a process
 * that is about to exit.
 */
export async function startServer(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  // Everything started so far (null: not started), stopped in one order by `stopAll`.
  let embedded: EmbeddedServer | null = null;
  let database: Db | null = null;
  let changes: ChangeFeed | null = null;
  let stream: StreamHub | null = null;
  let limits: RateLimits | null = null;
  let listening: { drain(ms: number): Promise<void> } | null = null;
  let worker: Worker | null = null;
  let jobs: Stoppable | null = null;
  let grouper: Stoppable | null = null;
  let analytics: Stoppable | null = null;
  let traffic: Stoppable | null = null;
  let pingDrain: Stoppable | null = null;
  let agentDrain: Stoppable | null = null;
  let closing = false;

  // One step's failure must not keep the later ones (above all the embedded PostgreSQL) from stopping.
  const step = async (what: string, fn: () => Promise<unknown> | undefined) => {
    try { await fn(); } catch (e) { log.error(`shutdown: ${what}`, e); }
  };
  let stopped: Promise<void> | null = null;
  // Once: a second call (close() after a failed close, a second signal's path) waits for the first.
  const stopAll = (graceMs: number) => (stopped ??= stopEverything(graceMs));
  const stopEverything = async (graceMs: number) => {
    // Readiness fails and answers say `Connection: close` from now; requests in flight finish,
    // the worker stops claiming and its checks finish (or are handed back), running jobs finish.
    closing = true;
    // Event streams end first: they never finish by themselves, and their clients reconnect to another process.
    await step('event streams', () => stream?.close());
    await Promise.all([
      step('connections', () => listening?.drain(graceMs)),
      step('worker', () => worker?.stop(Math.max(0, graceMs - 2000))),
    ]);
    await step('jobs', () => jobs?.stop());
    await step('grouper', () => grouper?.stop());
    // After the connections: events acknowledged until then are counted now, or by the next worker.
    await step('analytics drain', () => analytics?.stop());
    await step('traffic judge', () => traffic?.stop());
    // After the connections: pings acknowledged until then are applied now, or by the next worker.
    await step('ping drain', () => pingDrain?.stop());
    // After the connections: samples acknowledged until then are applied now, or by the next worker.
    await step('agent drain', () => agentDrain?.stop());
    await step('rate limits', () => limits?.close());
    await step('change feed', () => changes?.close());
    await step('database pool', () => database?.destroy());
    await step('embedded PostgreSQL', () => embedded?.stop());
  };

  try {
    const dbUrl = await openDatabase(config, log, (e) => { embedded = e; });
    const { db, pool, clock } = connectDb(dbUrl, 30);
    database = db;
    await migrateToLatest(db);
    await migrateQueue(pool, log);
    // Hot reads are cached while this feed tells us of other processes' writes.
    changes = await startChangeFeed(dbUrl, clock, (m, e) => log.error(m, e));
    // Exactly one of several processes started at once on an empty database creates the first organisation.
    const created = await bootstrapOrganization(db, config.bootstrapPlan);
    const bootstrapKey = created?.apiKey ?? null;
    // Besides the key, a password-reset-style link for the owner: nobody but whoever reads this start's output can use it.
    const ownerToken = created ? await ownerSetupToken(db, created.userId) : null;
    // The limiter opens (and closes) its own Redis client when REDIS_URL is set.
    limits = await createRateLimits(config, { pool, log });
    const secrets = createSecretBox(loadMasterKey(config.masterKey, config.dataDir));
    let baseUrl = config.baseUrl ?? '';
    const net = netPolicyFrom(config);
    stream = new StreamHub(db, { maxPerOrganization: config.stream.maxPerOrganization, log: (m, e) => log.error(m, e) });
    await stream.start(clock);
    const services: Services = { config, secrets, baseUrl: () => baseUrl, net, stream };
    const run = createRunner({ db, limits, services, handlers: handlers as never });
    const startedAt = Date.now();
    const lastPollAt = () => (config.worker ? worker?.lastPollAt ?? startedAt : null);
    const app = createApp(run, (m, e) => log.error(m, e), {
      db, secrets, services, limits, logger: log, closing: () => closing,
      metrics: { db, pool, lastPollAt, queue: config.worker },
    });
    // Pings, analytics and error events skip the app's router (src/transport/ping.ts, src/analytics/ingest.ts, src/errors/ingest.ts); everything else goes to the app.
    const fast = { db, logger: log, limits, closing: () => closing, baseUrl: () => baseUrl };
    const server = http.createServer(withErrorFastPath(withEventFastPath(withPingFastPath(app, fast), app, fast), fast));
    server.keepAliveTimeout = 65_000;
    server.on('clientError', answerClientError);
    const connections = trackConnections(server);
    // Listen before any background work starts: a port in use stops the start with nothing else to undo.
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e) => reject(listenError(e, config)));
      server.listen(config.port, config.host, () => resolve());
    });
    listening = connections;
    const { port } = server.address() as AddressInfo;
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const url = `http://${host}:${port}`;
    if (!config.baseUrl) baseUrl = url;
    if (config.worker) {
      worker = startWorker({ db, secrets, net, log, concurrency: config.checkConcurrency });
      jobs = await startJobs(pool, { db, secrets, services }, log);
      grouper = startGrouper(db, log);
      analytics = startAnalyticsDrain(db, log);
      traffic = startTrafficJudge(db, log, { minPageviews: config.trafficAlertMinPageviews });
      pingDrain = startPingDrain(db, log);
      agentDrain = startAgentDrain(db, log);
    }
    return {
      url,
      db,
      bootstrapKey,
      ownerSetupUrl: ownerToken ? `${baseUrl}/password-reset/${ownerToken}` : null,
      statusPageLoads: () => (app.locals.statusPages as PageCache).loads,
      close: () => stopAll(config.shutdownTimeoutMs),
    };
  } catch (e) {
    // A failed start: nothing was served and no check started long ago, so there is nothing to wait for.
    await stopAll(0);
    throw e;
  }
}
