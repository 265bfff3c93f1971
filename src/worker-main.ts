import { loadConfig } from './config';
import { createSecretBox, loadMasterKey } from './crypto/secrets';
import { connectDb } from './db/connect';
import { runningEmbeddedUrl } from './db/embedded';
import { migrateToLatest } from './db/migrate';
import { netPolicyFrom } from './engine/netPolicy';
import { startWorker } from './engine/worker';
import { createLogger } from './log';
import { migrateQueue } from './jobs/queue';
import { startJobs } from './jobs/tasks';

/**
 * `npm run worker`: a worker process only (scheduler and checks), for scale-out.
 * It needs DATABASE_URL (or a running server's embedded database) and the same
 * MASTER_KEY as the servers.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const url = config.databaseUrl ?? runningEmbeddedUrl(config.dataDir);
  if (!url) throw new Error('set DATABASE_URL (or start the server first, so its embedded database is running)');
  const { db, pool } = connectDb(url, 10);
  await migrateToLatest(db);
  await migrateQueue(pool, log);
  const secrets = createSecretBox(loadMasterKey(config.masterKey, config.dataDir));
  const net = netPolicyFrom(config);
  const worker = startWorker({ db, secrets, net, log, concurrency: config.checkConcurrency });
  const services = { config, secrets, net, baseUrl: () => config.baseUrl ?? `http://localhost:${config.port}` };
  const jobs = await startJobs(pool, { db, secrets, services }, log);
  const stop = async () => { await worker.stop(); await jobs.stop(); await db.destroy(); process.exit(0); };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((e) => {
  process.stderr.write(`Vigil worker failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
