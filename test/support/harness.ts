import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config';
import { addMember, createOrganization } from '../../src/domain/organizations';
import { createLogger, type Logger } from '../../src/log';
import { startServer, type RunningServer } from '../../src/server';
import { tempDir } from './child';

/** The admin URL of the run's PostgreSQL (see global-setup.mjs). */
export function adminUrl(): string {
  const url = process.env.VIGIL_TEST_ADMIN_URL;
  if (!url) throw new Error('VIGIL_TEST_ADMIN_URL is not set: run tests through jest');
  return url;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Creates an empty database for one test file and returns its URL and a dropper. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `vigil_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  return {
    url: withDatabase(adminUrl(), name),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl() });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** A server on its own database, with helpers to make organisations and call the API. */
export interface TestServer extends RunningServer {
  databaseUrl: string;
  org(opts?: { plan?: string; name?: string }): Promise<{ organizationId: string; workspaceId: string; userId: string; apiKey: string }>;
  member(organizationId: string, role: string, workspaceIds?: string[]): Promise<{ userId: string; membershipId: string; apiKey: string }>;
  api(key: string | null): ApiClient;
}

/** Starts Vigil on a fresh database (rate limits as configured in `env`). */
export async function startTestServer(env: Record<string, string> = {}, opts: { log?: Logger } = {}): Promise<TestServer> {
  const database = await freshDatabase();
  const dataDir = tempDir('vigil-test-data-');
  const config: Config = loadConfig({ DATABASE_URL: database.url, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_STORE: 'memory', WORKER: 'false', ...env });
  const server = await startServer(config, opts.log ?? createLogger('silent'));
  let n = 0;
  return {
    ...server,
    databaseUrl: database.url,
    org: (opts = {}) => createOrganization(server.db, { name: opts.name ?? `Org ${++n}`, ownerEmail: `owner${n}-${Math.random().toString(36).slice(2, 8)}@example.test`, plan: opts.plan ?? 'business' }),
    member: (organizationId, role, workspaceIds) => addMember(server.db, { organizationId, email: `${role}-${Math.random().toString(36).slice(2, 8)}@example.test`, role, workspaceIds }),
    api: (key) => new ApiClient(server.url, key),
    async close() {
      await server.close();
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A response as tests look at it. */
export interface ApiResponse<T = any> { status: number; headers: Headers; body: T }

/** A small JSON client for the REST API. */
export class ApiClient {
  constructor(readonly base: string, readonly key: string | null) {}

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const h: Record<string, string> = { ...headers };
    if (this.key) h.authorization = `Bearer ${this.key}`;
    let payload: BodyInit | undefined;
    if (body !== undefined) {
      if (typeof body === 'string' || body instanceof Uint8Array) payload = body as BodyInit;
      else { payload = JSON.stringify(body); h['content-type'] ??= 'application/json'; }
    }
    const res = await fetch(`${this.base}/api/v1${path}`, { method, headers: h, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    try { parsed = text ? JSON.parse(text) : undefined; } catch { /* not JSON */ }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  get<T = any>(path: string, headers?: Record<string, string>) { return this.request<T>('GET', path, undefined, headers); }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) { return this.request<T>('POST', path, body, headers); }
  patch<T = any>(path: string, body?: unknown) { return this.request<T>('PATCH', path, body); }
  put<T = any>(path: string, body?: unknown) { return this.request<T>('PUT', path, body); }
  delete<T = any>(path: string, body?: unknown) { return this.request<T>('DELETE', path, body); }
}
