import { ConfigError, loadConfig } from './config';
import { createLogger } from './log';
import { startServer, type RunningServer } from './server';

/**
 * `npm start`: the API and (unless WORKER=false) the worker in one process.
 * A start that fails prints one line and exits non-zero, having stopped
 * whatever it had started (startServer cleans up after itself).
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, { format: config.logFormat });
  let stopping = false;
  let starting: Promise<RunningServer> | null = null;
  const stop = async (signal: string) => {
    // A second signal while draining: the operator wants out now.
    if (stopping) process.exit(1);
    stopping = true;
    log.info('shutting down', { signal, timeoutSeconds: config.shutdownTimeoutMs / 1000 });
    const began = Date.now();
    // A signal during start-up waits for the start to finish (or to fail and clean up), then stops what it started:
    // exiting at once would leave the embedded PostgreSQL running.
    const server = await starting?.catch(() => null);
    // A start that failed has cleaned up; main's handler below reports it and exits non-zero.
    if (!server) return;
    await server.close().catch((e) => log.error('shutdown', e));
    log.info('stopped', { durationMs: Date.now() - began });
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  starting = startServer(config, log);
  const server = await starting;
  if (stopping) return;
  process.stdout.write(`Vigil is listening at ${server.url} (API: ${server.url}/api/v1)\n`);
  if (server.bootstrapKey) {
    process.stdout.write(`First start: created an organisation and its owner. Owner API key (shown once):\n  ${server.bootstrapKey}\n`);
    if (server.ownerSetupUrl) {
      process.stdout.write(`Set the owner's password and sign in (owner@localhost; one-time link, valid 24 hours):\n  ${server.ownerSetupUrl}\n`);
    }
  }
}

main().catch((e) => {
  // One line, never a stack trace: a bad setting names its variable, a busy port says which and what to set.
  const why = e instanceof ConfigError ? `invalid configuration: ${e.message}` : e instanceof Error ? e.message : String(e);
  process.stderr.write(`Vigil failed to start: ${why}\n`);
  process.exit(e instanceof ConfigError ? 2 : 1);
});
