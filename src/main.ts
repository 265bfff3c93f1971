import { loadConfig } from './config';
import { createLogger } from './log';
import { startServer } from './server';

/** `npm start`: the API (and, from the engine issue on, the worker) in one process. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const server = await startServer(config, log);
  process.stdout.write(`Vigil is listening at ${server.url} (API: ${server.url}/api/v1)\n`);
  if (server.bootstrapKey) {
    process.stdout.write(`First start: created an organisation and its owner. Owner API key (shown once):\n  ${server.bootstrapKey}\n`);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: shutting down`);
    await server.close().catch((e) => log.error('shutdown', e));
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e) => {
  process.stderr.write(`Vigil failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
