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
import { createRateLimits } from './pipeline/ratelimit';
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

/** A running Vigil process (role serve). */
export interface RunningServer {
  url: string;
  db: Db;
  /** The owner key printed on the first start of an empty database, else null. */
  bootstrapKey: string | null;
  /** How often public status pages were read from the database (each visit otherwise comes from memory). */
  statusPageLoads(): number;
  close(): Promise<void>;
}

/** Where the database is: the configured URL, or an embedded server started now. */
async function openDatabase(config: Config, log: Logger): Promise<{ url: string; embedded: EmbeddedServer | null }> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: null };
  const embedded = await startEmbedded(config.dataDir, log);
  await ensureDatabase(embedded.url('postgres'), 'vigil');
  return { url: embedded.url('vigil'), embedded };
}

/** Starts the API: database, migrations, first-start bootstrap, HTTP listener. */
export async function startServer(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  const { url: dbUrl, embedded } = await openDatabase(config, log);
  const { db, pool, clock } = connectDb(dbUrl, 30);
  let changes: ChangeFeed | undefined;
  try {
    await migrateToLatest(db);
    await migrateQueue(pool, log);
    // Hot reads are cached while this feed tells us of other processes' writes.
    changes = await startChangeFeed(dbUrl, clock, (m, e) => log.error(m, e));
    // Exactly one of several processes started at once on an empty database creates the first organisation.
    const bootstrapKey = (await bootstrapOrganization(db, config.bootstrapPlan))?.apiKey ?? null;
    // The limiter opens (and closes) its own Redis client when REDIS_URL is set.
    const limits = await createRateLimits(config, { pool, log });
    const secrets = createSecretBox(loadMasterKey(config.masterKey, config.dataDir));
    let baseUrl = config.baseUrl ?? '';
    const net = netPolicyFrom(config);
    const services: Services = { config, secrets, baseUrl: () => baseUrl, net };
    const run = createRunner({ db, limits, services, handlers: handlers as never });
    let closing = false;
    let worker: Worker | null = null;
    const lastPollAt = () => (config.worker ? worker?.lastPollAt ?? startedAt : null);
    const startedAt = Date.now();
    const app = createApp(run, (m, e) => log.error(m, e), {
      db, secrets, services, limits, logger: log, closing: () => closing,
      metrics: { db, pool, lastPollAt, queue: config.worker },
    });
    worker = config.worker ? startWorker({ db, secrets, net, log, concurrency: config.checkConcurrency }) : null;
    const jobs = config.worker ? await startJobs(pool, { db, secrets, services }, log) : null;
    const grouper = config.worker ? startGrouper(db, log) : null;
    const analytics = config.worker ? startAnalyticsDrain(db, log) : null;
    const traffic = config.worker ? startTrafficJudge(db, log, { minPageviews: config.trafficAlertMinPageviews }) : null;
    const pingDrain = config.worker ? startPingDrain(db, log) : null;
    const agentDrain = config.worker ? startAgentDrain(db, log) : null;
    // Pings, analytics and error events skip the app's router (src/transport/ping.ts, src/analytics/ingest.ts, src/errors/ingest.ts); everything else goes to the app.
    const fast = { db, logger: log, limits, closing: () => closing, baseUrl: () => baseUrl };
    const server = http.createServer(withErrorFastPath(withEventFastPath(withPingFastPath(app, fast), app, fast), fast));
    server.keepAliveTimeout = 65_000;
    server.on('clientError', answerClientError);
    const connections = trackConnections(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const url = `http://${host}:${port}`;
    if (!config.baseUrl) baseUrl = url;
    return {
      url,
      db,
      bootstrapKey,
      statusPageLoads: () => (app.locals.statusPages as PageCache).loads,
      async close() {
        // Readiness fails and answers say `Connection: close` from now; requests in flight finish,
        // the worker stops claiming and its checks finish (or are handed back), running jobs finish.
        closing = true;
        const grace = config.shutdownTimeoutMs;
        await Promise.all([
          connections.drain(grace),
          worker?.stop(Math.max(0, grace - 2000)),
        ]);
        await jobs?.stop();
        await grouper?.stop();
        // After the connections: events acknowledged until then are counted now, or by the next worker.
        await analytics?.stop();
        await traffic?.stop();
        // After the connections: pings acknowledged until then are applied now, or by the next worker.
        await pingDrain?.stop();
        // After the connections: samples acknowledged until then are applied now, or by the next worker.
        await agentDrain?.stop();
        await limits.close();
        await changes?.close();
        await db.destroy();
        await embedded?.stop();
      },
    };
  } catch (e) {
    await changes?.close();
    await db.destroy().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw e;
  }
}
