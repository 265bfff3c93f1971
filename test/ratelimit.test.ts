import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { startServer, type RunningServer } from '../src/server';
import { ApiClient, startTestServer, type TestServer } from './support/harness';
import { tempDir } from './support/child';

// Limits are per organisation (not per key), answer 429 rate_limited with
// Retry-After in whole seconds, and hold across processes sharing a store.

async function spend(api: ApiClient, n: number, method: 'get' | 'post' = 'get') {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = method === 'get' ? await api.get('/summary') : await api.post('/workspaces', { name: `w${i}` });
    statuses.push(r.status);
  }
  return statuses;
}

describe('single process (memory store)', () => {
  let server: TestServer;
  beforeAll(async () => { server = await startTestServer({ RATE_LIMIT_READ: '5', RATE_LIMIT_WRITE: '3' }); });
  afterAll(() => server.close());

  test('reads over the limit are 429 rate_limited with Retry-After', async () => {
    const { apiKey } = await server.org();
    expect(await spend(server.api(apiKey), 5)).toEqual([200, 200, 200, 200, 200]);
    const r = await server.api(apiKey).get('/monitors');
    expect(r.status).toBe(429);
    expect(r.body.code).toBe('rate_limited');
    const retry = r.headers.get('retry-after');
    expect(retry).toMatch(/^\d+$/);
    expect(Number(retry)).toBeGreaterThanOrEqual(1);
    expect(Number(retry)).toBeLessThanOrEqual(60);
    expect(r.headers.get('vary')).toBe('Accept, Content-Type');
  });

  test('the limit is per organisation: another key of the same organisation shares it, another organisation does not', async () => {
    const org = await server.org();
    const second = await server.member(org.organizationId, 'admin');
    expect(await spend(server.api(org.apiKey), 3, 'post')).toEqual([201, 201, 201]);
    expect((await server.api(second.apiKey).post('/workspaces', { name: 'x' })).status).toBe(429);
    // Writes and reads are separate buckets.
    expect((await server.api(second.apiKey).get('/workspaces')).status).toBe(200);
    const other = await server.org();
    expect((await server.api(other.apiKey).post('/workspaces', { name: 'y' })).status).toBe(201);
  });
});

/** Two server processes' worth of Vigil on one database, sharing the limiter's store. */
async function twoServers(env: Record<string, string>): Promise<{ a: TestServer; b: RunningServer; close: () => Promise<void> }> {
  const a = await startTestServer(env);
  const dir = tempDir('vigil-rl-');
  const b = await startServer(loadConfig({ ...env, DATABASE_URL: a.databaseUrl, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }), createLogger('silent'));
  return { a, b, close: async () => { await b.close(); await a.close(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

test('the postgres store holds one limit across two servers', async () => {
  const { a, b, close } = await twoServers({ RATE_LIMIT_STORE: 'postgres', RATE_LIMIT_READ: '6' });
  try {
    const { apiKey } = await a.org();
    const onA = new ApiClient(a.url, apiKey);
    const onB = new ApiClient(b.url, apiKey);
    expect(await spend(onA, 3)).toEqual([200, 200, 200]);
    expect(await spend(onB, 3)).toEqual([200, 200, 200]);
    expect((await onA.get('/summary')).status).toBe(429);
    expect((await onB.get('/summary')).status).toBe(429);
  } finally {
    await close();
  }
});

test('ingestion limits on the postgres store are spent in blocks: two servers together still stop at the limit', async () => {
  // 300 a minute: blocks of 3 points, so a process runs ahead of the others by at most 3 events.
  const { a, b, close } = await twoServers({ RATE_LIMIT_STORE: 'postgres', ERRORS_PER_PROJECT_PER_MINUTE: '300', RATE_LIMIT_WRITE: '1000' });
  try {
    const org = await a.org();
    const p = (await new ApiClient(a.url, org.apiKey).post('/errors/projects', { name: 'blocks', workspaceId: org.workspaceId })).body.data;
    const statuses: number[] = [];
    for (let i = 0; i < 330; i++) {
      const res = await fetch(`${[a, b][i % 2].url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body: '{}\n{"type":"event"}\n{"message":"m"}' });
      statuses.push(res.status);
    }
    const accepted = statuses.filter((s) => s === 200).length;
    expect(accepted).toBeLessThanOrEqual(300);
    expect(accepted).toBeGreaterThanOrEqual(300 - 2 * 3);
    expect(statuses.slice(-20).every((s) => s === 429)).toBe(true);
  } finally {
    await close();
  }
});

const redisUrl = process.env.TEST_REDIS_URL;
(redisUrl ? test : test.skip)('the redis store (REDIS_URL) holds one limit across two servers', async () => {
  const { a, b, close } = await twoServers({ REDIS_URL: redisUrl!, RATE_LIMIT_STORE: 'redis', RATE_LIMIT_WRITE: '4' });
  try {
    const { apiKey } = await a.org();
    expect(await spend(new ApiClient(a.url, apiKey), 2, 'post')).toEqual([201, 201]);
    expect(await spend(new ApiClient(b.url, apiKey), 2, 'post')).toEqual([201, 201]);
    expect((await new ApiClient(a.url, apiKey).post('/workspaces', { name: 'z' })).status).toBe(429);
  } finally {
    await close();
  }
});
