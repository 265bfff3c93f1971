/**
 * Health endpoints for orchestrators and load balancers. `/healthz`: the
 * process is alive and answering. `/readyz`: it should get traffic — the
 * database answers, every migration of this build has run, a worker's
 * scheduler looked for due work within the last minute, and shutdown has not
 * begun. Each failed check is named in the body.
 */
import { sql } from 'kysely';
import type { Express, Request, Response } from 'express';
import type { Db } from '../db/connect';
import { pendingMigrations } from '../db/migrate';

/** A scheduler that has not polled for this long is stuck. */
const SCHEDULER_STALE_MS = 60_000;
const DB_TIMEOUT_MS = 2000;

export interface HealthSources {
  db: Db;
  /** Unix ms of the scheduler's last look for due work; null when this process runs no worker. */
  lastPollAt: () => number | null;
  closing: () => boolean;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms); })])
    .finally(() => clearTimeout(timer));
}

function send(res: Response, status: number, body: unknown): void {
  res.status(status).setHeader('Cache-Control', 'no-store');
  res.json(body);
}

export function mountHealth(app: Express, s: HealthSources): void {
  // Once every migration has run it stays so for this build: asked until then only.
  let migrated = false;
  app.get('/healthz', (_req: Request, res: Response) => send(res, 200, { status: 'ok' }));
  app.get('/readyz', async (_req: Request, res: Response) => {
    const checks: Record<string, string> = {};
    if (s.closing()) checks.shutdown = 'shutting down';
    try {
      await withTimeout(sql`select 1`.execute(s.db), DB_TIMEOUT_MS, 'the database');
      checks.database = 'ok';
      if (!migrated) {
        const pending = await withTimeout(pendingMigrations(s.db), DB_TIMEOUT_MS, 'the database');
        migrated = pending.length === 0;
        checks.migrations = migrated ? 'ok' : `pending: ${pending.join(', ')}`;
      } else checks.migrations = 'ok';
    } catch (e) {
      checks.database = (e as Error).message;
    }
    const poll = s.lastPollAt();
    if (poll !== null) {
      const age = Date.now() - poll;
      checks.scheduler = age <= SCHEDULER_STALE_MS ? 'ok' : `no look for due monitors in ${Math.round(age / 1000)} s`;
    }
    const ready = Object.entries(checks).every(([k, v]) => k !== 'shutdown' && v === 'ok');
    send(res, ready ? 200 : 503, { status: ready ? 'ready' : 'unready', checks });
  });
}
