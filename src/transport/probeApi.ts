import express, { type Request, type Response, type Router } from 'express';
import type { SecretBox } from '../crypto/secrets';
import type { Db } from '../db/connect';
import { claimDue, jobOf, nextDue } from '../engine/claim';
import type { CheckResult } from '../engine/kinds/kind';
import { writeResults } from '../engine/results';
import { textProblem } from '../pipeline/text';
import { underMaintenance } from '../alerting/maintenance';
import { probeByToken } from '../domain/probes';
import { ApiError, invalid } from '../pipeline/errors';
import { sendError, sendJson } from './respond';
import { BODY_LIMITS, readBody } from './body';

const OUTCOMES = new Set(['up', 'degraded', 'down']);

/**
 * The most characters a probe's identity may have, and a result's cause; the
 * most a result's detail may weigh as JSON (a posture or TLS check's findings
 * are a few KiB). Over them a call is refused (400 naming the field): they are
 * stored as given and shown on every read. A result's message is instead cut
 * to 1,000 characters when stored, as the server's own checks' are: it holds
 * the outside world's words, and one long answer must not cost the batch.
 */
export const PROBE_TEXT_MAX = { hostname: 255, version: 64, cause: 64, detailJson: 65_536 } as const;

/** The JSON body of a probe call (empty = none). */
function parseJson(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ApiError(400, 'invalid_json', 'The body is not valid JSON.', {}, [{ field: 'body', reason: 'is not valid JSON' }]);
  }
}

/**
 * The private-probe protocol at `/probe/v1`, authenticated by the probe's own
 * token (`Authorization: Bearer pr_…`): `POST /claim` hands out the probe's due
 * monitors with their configs; `POST /results` stores what it found. A revoked
 * probe is 401 and gets no work.
 */
export function probeRouter(db: Db, secrets: SecretBox, log: (msg: string, e: unknown) => void): Router {
  const router = express.Router();
  const authed = (fn: (probe: NonNullable<Awaited<ReturnType<typeof probeByToken>>>, body: unknown, req: Request, res: Response) => Promise<void>) =>
    async (req: Request, res: Response) => {
      try {
        // The token is checked before a byte of the body is read.
        const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
        const probe = await probeByToken(db, token);
        if (!probe) throw new ApiError(401, 'unauthorized', 'Missing, unknown or revoked probe token.');
        await fn(probe, parseJson(await readBody(req, BODY_LIMITS.probe)), req, res);
      } catch (e) {
        sendError(req, res, e, log);
      }
    };

  router.post('/claim', authed(async (probe, raw, req, res) => {
    const body = (raw ?? {}) as { hostname?: unknown; version?: unknown; max?: unknown };
    // Text stored as given must be storable (NUL or lone surrogates would fail the update) and bounded.
    for (const f of ['hostname', 'version'] as const) {
      const v = body[f];
      if (typeof v !== 'string') continue;
      if ([...v].length > PROBE_TEXT_MAX[f]) throw invalid(f, `must be at most ${PROBE_TEXT_MAX[f]} characters`);
      const problem = textProblem(v);
      if (problem) throw invalid(f, problem);
    }
    await db.updateTable('probes').set({
      last_seen_at: new Date(),
      hostname: typeof body.hostname === 'string' ? body.hostname : null,
      version: typeof body.version === 'string' ? body.version : null,
    }).where('id', '=', probe.id).execute();
    const max = Math.min(Math.max(typeof body.max === 'number' && Number.isFinite(body.max) ? Math.floor(body.max) : 50, 1), 500);
    const claimed = await claimDue(db, max, probe.id);
    const now = new Date();
    const quiet = claimed.length ? await underMaintenance(db, claimed.map((m) => m.id), now) : new Map();
    const skipped = claimed.filter((m) => quiet.get(m.id)?.keepChecking === false);
    if (skipped.length) await writeResults(db, skipped.map((m) => ({ monitor: m, result: null, at: now, nextDueAt: nextDue(m, now) })));
    sendJson(req, res, 200, { jobs: claimed.filter((m) => !skipped.includes(m)).map((m) => jobOf(m, secrets)) });
  }));

  router.post('/results', authed(async (probe, body, req, res) => {
    const items = (body as { results?: unknown })?.results;
    if (!Array.isArray(items)) throw invalid('results', 'must be a list');
    // A probe claims at most 500 at a time: more results than that in one call are not its work.
    if (items.length > 1000) throw invalid('results', 'at most 1000 results a call');
    items.forEach((r, i) => {
      const item = r as { monitorId?: unknown; result?: { outcome?: unknown; message?: unknown; cause?: unknown; detail?: unknown } | null } | null;
      if (!item || typeof item !== 'object' || typeof item.monitorId !== 'string') throw invalid(`results.${i}.monitorId`, 'must be a monitor id');
      if (item.result !== null && item.result !== undefined && (typeof item.result !== 'object' || typeof item.result.message !== 'string')) {
        throw invalid(`results.${i}.result`, 'must be a check result with a message, or null');
      }
      const cause = item.result?.cause;
      if (cause !== undefined && cause !== null && (typeof cause !== 'string' || cause.length > PROBE_TEXT_MAX.cause)) {
        throw invalid(`results.${i}.result.cause`, `must be a cause of at most ${PROBE_TEXT_MAX.cause} characters, or null`);
      }
      const detail = item.result?.detail;
      if (detail !== undefined && detail !== null && JSON.stringify(detail).length > PROBE_TEXT_MAX.detailJson) {
        throw invalid(`results.${i}.result.detail`, `must be at most ${PROBE_TEXT_MAX.detailJson} characters as JSON`);
      }
    });
    const ids = [...new Set(items.map((r) => String((r as { monitorId?: unknown }).monitorId)))];
    const monitors = ids.length === 0 ? [] : await db.selectFrom('monitors').innerJoin('monitor_schedule as s', 's.monitor_id', 'monitors.id')
      .select(['id', 'organization_id', 'workspace_id', 'name', 'kind', 'status', 'consecutive_failures', 'confirmations', 'depends_on', 'interval_seconds', 's.next_due_at'])
      .where('monitors.probe_id', '=', probe.id).where('id', 'in', ids).execute();
    const byId = new Map(monitors.map((m) => [m.id, m]));
    const now = new Date();
    const batch = [];
    for (const [i, raw] of items.entries()) {
      const r = raw as { monitorId: string; at?: string; result?: CheckResult | null };
      const m = byId.get(r.monitorId);
      // A monitor moved off this probe (or another organisation's) is not this probe's to report.
      if (!m) continue;
      if (r.result && !OUTCOMES.has(r.result.outcome)) throw invalid(`results.${i}.result.outcome`, 'must be up, degraded or down');
      const reported = r.at ? new Date(r.at) : now;
      // A probe's clock is trusted within the last hour only (no results for arbitrary months).
      const at = Number.isNaN(reported.getTime()) || reported > now || reported.getTime() < now.getTime() - 3_600_000 ? now : reported;
      batch.push({ monitor: m, result: r.result ?? null, at, nextDueAt: nextDue({ kind: m.kind, interval_seconds: m.interval_seconds, next_due_at: m.next_due_at ?? now }, now), probeId: probe.id });
    }
    await writeResults(db, batch);
    sendJson(req, res, 200, { accepted: batch.length });
  }));
  return router;
}
