import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { createOrganization } from '../src/domain/organizations';
import { databaseAnswer } from '../src/pipeline/dbErrors';
import { startServer, type RunningServer } from '../src/server';
import { adminUrl, ApiClient, freshDatabase } from './support/harness';

// Issue 25, item 5: with Redis configured but unreachable the rate limits stay
// shared (they fall back to PostgreSQL, not to each process's memory), the
// log says so once per change of state instead of once per reconnection, and
// a database out of connections answers 503 with Retry-After, never 500.

const DOWN = /Redis is unreachable/;
const UP = /Redis is reachable again/;

/** A free TCP port on the loopback (closed again: nothing listens on it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** A Vigil server whose log lines the test reads. */
interface Logged { server: RunningServer; lines: string[]; count(re: RegExp): number }

async function serve(databaseUrl: string, env: Record<string, string>, dirs: string[]): Promise<Logged> {
  const lines: string[] = [];
  const sink = new Writable({ write(c, _e, cb) { lines.push(...String(c).split('\n').filter(Boolean)); cb(); } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-rlf-'));
  dirs.push(dir);
  const server = await startServer(loadConfig({
    DATABASE_URL: databaseUrl, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', WORKER: 'false',
    MASTER_KEY: Buffer.alloc(32, 5).toString('base64'), ...env,
  }), createLogger('info', { destination: sink }));
  return { server, lines, count: (re) => lines.filter((l) => re.test(l)).length };
}

/** Waits (polling, generously: the machine is shared) until `ok` holds. */
async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `n` reads of the organisation's key, alternating between the servers, four at a time; the statuses. */
async function reads(urls: string[], key: string, n: number): Promise<number[]> {
  const out: number[] = [];
  let i = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (i < n) {
      const url = urls[i++ % urls.length];
      out.push((await new ApiClient(url, key).get('/summary')).status);
    }
  }));
  return out;
}

const counted = (statuses: number[]) => ({ ok: statuses.filter((s) => s === 200).length, limited: statuses.filter((s) => s === 429).length });

describe('Redis configured but unreachable', () => {
  let database: { url: string; drop: () => Promise<void> };
  const dirs: string[] = [];
  let servers: Logged[] = [];
  let redis: ChildProcess | null = null;
  let errors: jest.SpyInstance;

  beforeAll(async () => { database = await freshDatabase(); });
  beforeEach(() => { errors = jest.spyOn(console, 'error'); });
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.server.close()));
    servers = [];
    redis?.kill('SIGKILL');
    redis = null;
    errors.mockRestore();
  });
  afterAll(async () => {
    await database.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('from the start: two servers share one limit of 120 reads through PostgreSQL, and each logs it once', async () => {
    const env = { REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
    servers = [await serve(database.url, env, dirs), await serve(database.url, env, dirs)];
    await until('the unreachable line', () => servers.every((s) => s.count(DOWN) >= 1));
    const org = await createOrganization(servers[0].server.db, { name: 'Closed port', ownerEmail: `closed-${Date.now()}@example.test`, plan: 'enterprise' });
    const statuses = await reads(servers.map((s) => s.server.url), org.apiKey, 150);
    expect(counted(statuses)).toEqual({ ok: 120, limited: 30 });
    // ioredis retried many times meanwhile; each server said it once, and nothing went unhandled.
    for (const s of servers) expect(s.count(DOWN)).toBe(1);
    expect(errors.mock.calls.filter((c) => String(c[0]).includes('[ioredis]'))).toEqual([]);
  }, 120_000);

  test('a Redis that goes away and comes back: limits stay shared, one log line per change of state', async () => {
    const port = await freePort();
    const startRedis = async () => {
      redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      for (let i = 0; i < 100; i++) {
        const up = await new Promise<boolean>((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true); });
          s.once('error', () => resolve(false));
        });
        if (up) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('redis-server did not start');
    };
    const stopRedis = async () => {
      const r = redis!;
      redis = null;
      await new Promise((resolve) => { r.once('exit', resolve); r.kill('SIGKILL'); });
    };
    await startRedis();
    servers = [await serve(database.url, { REDIS_URL: `redis://127.0.0.1:${port}` }, dirs), await serve(database.url, { REDIS_URL: `redis://127.0.0.1:${port}` }, dirs)];
    const urls = servers.map((s) => s.server.url);

    // Up: counted in Redis, shared.
    const first = await createOrganization(servers[0].server.db, { name: 'Redis up', ownerEmail: `up-${Date.now()}@example.test`, plan: 'enterprise' });
    expect(counted(await reads(urls, first.apiKey, 130))).toEqual({ ok: 120, limited: 10 });

    // Down: one line per server, and the limit is still one for both (PostgreSQL).
    await stopRedis();
    await until('the unreachable line', () => servers.every((s) => s.count(DOWN) === 1));
    const second = await createOrganization(servers[0].server.db, { name: 'Redis down', ownerEmail: `down-${Date.now()}@example.test`, plan: 'enterprise' });
    expect(counted(await reads(urls, second.apiKey, 130))).toEqual({ ok: 120, limited: 10 });

    // Back, then gone again: one line each time.
    await startRedis();
    await until('the reachable-again line', () => servers.every((s) => s.count(UP) === 1));
    await stopRedis();
    await until('the second unreachable line', () => servers.every((s) => s.count(DOWN) === 2));
    await new Promise((r) => setTimeout(r, 3000)); // ioredis keeps retrying; none of it is logged
    for (const s of servers) expect({ down: s.count(DOWN), up: s.count(UP) }).toEqual({ down: 2, up: 1 });
    expect(errors.mock.calls.filter((c) => String(c[0]).includes('[ioredis]'))).toEqual([]);
  }, 180_000);
});

describe('PostgreSQL out of connections', () => {
  test('a request that cannot get a connection is 503 service_unavailable with Retry-After, and serves again once it can', async () => {
    const role = `vigil_tiny_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const database = await freshDatabase();
    const admin = new pg.Client({ connectionString: adminUrl() });
    await admin.connect();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-tiny-'));
    let server: RunningServer | null = null;
    try {
      await admin.query(`create role ${role} login`);
      await admin.query(`alter database ${new URL(database.url).pathname.slice(1)} owner to ${role}`);
      const url = new URL(database.url);
      url.username = role;
      server = await startServer(loadConfig({
        DATABASE_URL: url.toString(), DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WORKER: 'false', RATE_LIMIT_STORE: 'memory',
      }), createLogger('silent'));
      const org = await createOrganization(server.db, { name: 'Tiny', ownerEmail: `tiny-${Date.now()}@example.test`, plan: 'enterprise' });
      const api = new ApiClient(server.url, org.apiKey);
      expect((await api.get('/me')).status).toBe(200);

      // No new connection for the role, and the ones it holds are gone: "too many connections for role" (53300).
      await admin.query(`alter role ${role} connection limit 0`);
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role]);
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 0; i < 3; i++) {
        const r = await api.get('/me');
        expect(r.status).toBe(503);
        expect(r.body).toMatchObject({ code: 'service_unavailable', vars: { retryAfter: expect.stringMatching(/^\d+$/) } });
        expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      }

      await admin.query(`alter role ${role} connection limit -1`);
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await api.get('/me')).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      expect(status).toBe(200);
    } finally {
      await server?.close();
      await database.drop();
      await admin.query(`drop role if exists ${role}`);
      await admin.end();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  test('a pool that timed out waiting for a connection, and PostgreSQL refusing one, are 503 with Retry-After', () => {
    for (const e of [new Error('timeout exceeded when trying to connect'), Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })]) {
      const answer = databaseAnswer(e);
      expect(answer?.status).toBe(503);
      expect(answer?.headers['Retry-After']).toMatch(/^\d+$/);
    }
  });
});
