import { ConfigError, loadConfig } from './config';
import { createSecretBox, loadMasterKey } from './crypto/secrets';
import { connectDb, type Db } from './db/connect';
import { runningEmbeddedUrl } from './db/embedded';
import { migrateToLatest } from './db/migrate';
import { netPolicyFrom } from './net/policy';
import { startWorker, type Worker } from './engine/worker';
import { createLogger } from './log';
import { migrateQueue } from './jobs/queue';
import { startJobs } from './jobs/tasks';
import { startGrouper } from './errors/grouper';
import { startAnalyticsDrain } from './analytics/drain';
import { startTrafficJudge } from './analytics/traffic';
import { startPingDrain } from './ingest/pings';
import { startAgentDrain } from './ingest/agents';

interface Stoppable { stop(): Promise<unknown> }

/**
 * `npm run worker`: a worker process only (scheduler and checks), for scale-out.
 * It needs DATABASE_URL (or a running server's embedded database) and the same
 * MASTER_KEY as the servers. A start that fails half-way stops what it had
 * started (by the path a signal takes) and exits non-zero with one line.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, { format: config.logFormat });
  const url = config.databaseUrl ?? runningEmbeddedUrl(config.dataDir);
  if (!url) throw new Error('set DATABASE_URL (or start the server first, so its embedded database is running)');
  let db: Db | null = null;
  let worker: Worker | null = null;
  // Stopped in this order after the worker: running jobs finish, then the grouper and the drains.
  const background: Stoppable[] = [];
  const stopAll = async (graceMs: number) => {
    // Running checks finish (or are handed back to another worker), running jobs finish.
    await worker?.stop(Math.max(0, graceMs - 2000)).catch((e) => log.error('shutdown: worker', e));
    for (const b of background) await b.stop().catch((e) => log.error('shutdown', e));
    await db?.destroy().catch(() => undefined);
  };
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info('shutting down', { signal });
    await stopAll(config.shutdownTimeoutMs);
    process.exit(0);
  };
  try {
    const conn = connectDb(url, 10);
    db = conn.db;
    await migrateToLatest(db);
    await migrateQueue(conn.pool, log);
    const secrets = createSecretBox(loadMasterKey(config.masterKey, config.dataDir));
    const net = netPolicyFrom(config);
    worker = startWorker({ db, secrets, net, log, concurrency: config.checkConcurrency });
    const services = { config, secrets, net, baseUrl: () => config.baseUrl ?? `http://localhost:${config.port}` };
    background.push(await startJobs(conn.pool, { db, secrets, services }, log));
    background.push(startGrouper(db, log));
    // Alone in its process, the drain takes larger batches (up to 10,000 events, a second between partial ones): its
    // counting blocks no request here, and each batch's roll-up rows serve more events (bench:analytics: PostgreSQL
    // ~34 instead of ~44 µs per event). Counted events appear in reports about a second after they are accepted.
    background.push(startAnalyticsDrain(db, log, { gapMs: 1000, batch: 10_000 }));
    background.push(startTrafficJudge(db, log, { minPageviews: config.trafficAlertMinPageviews }));
    background.push(startPingDrain(db, log));
    background.push(startAgentDrain(db, log));
  } catch (e) {
    await stopAll(0);
    throw e;
  }
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e) => {
  const why = e instanceof ConfigError ? `invalid configuration: ${e.message}` : e instanceof Error ? e.message : String(e);
  process.stderr.write(`Vigil worker failed to start: ${why}\n`);
  process.exit(e instanceof ConfigError ? 2 : 1);
});
