import { ConfigError, loadConfig } from './config';
import { createLogger } from './log';
import { startServer } from './server';

/** `npm start`: the API and (unless WORKER=false) the worker in one process. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, { format: config.logFormat });
  const server = await startServer(config, log);
  process.stdout.write(`Vigil is listening at ${server.url} (API: ${server.url}/api/v1)\n`);
  if (server.bootstrapKey) {
    process.stdout.write(`First start: created an organisation and its owner. Owner API key (shown once):\n  ${server.bootstrapKey}\n`);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    // A second signal while draining: the operator wants out now.
    if (stopping) process.exit(1);
    stopping = true;
    log.info('shutting down', { signal, timeoutSeconds: config.shutdownTimeoutMs / 1000 });
    const started = Date.now();
    await server.close().catch((e) => log.error('shutdown', e));
    log.info('stopped', { durationMs: Date.now() - started });
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e) => {
  // One line, never a stack trace: a bad setting names its variable.
  const why = e instanceof ConfigError ? `invalid configuration: ${e.message}` : e instanceof Error ? e.message : String(e);
  process.stderr.write(`Vigil failed to start: ${why}\n`);
  process.exit(e instanceof ConfigError ? 2 : 1);
});
