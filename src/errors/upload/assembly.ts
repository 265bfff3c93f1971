/**
 * What an assemble request answers, in the tools' terms: `not_found` with
 * the chunks still to send, `assembling` while another request is at it, or
 * the outcome of the assembly (`ok`, or `error` with the reason in `detail`,
 * which the tools print). Assembly runs inside the request, once: the
 * request that claims the file (a row in `error_upload_assemblies`) does it,
 * and the outcome is kept (an hour, as chunks), so the tools' repeated asks
 * (sentry-cli 3 asks before and after sending chunks, and polls) and a
 * second CI job sending the same file get it again without the work being
 * redone or the organisation's upload bucket charged twice.
 *
 * The file's chunks are dropped here, by the request that holds the claim,
 * in the transaction that records the outcome, and by no other: a request
 * answered `assembling` (or from a kept outcome) must leave them, since the
 * claimer may not have read them yet. So whoever finds chunks gone can find
 * the outcome that consumed them, and does before asking for them again.
 */
import { sql } from 'kysely';
import type { Caller } from '../../auth/caller';
import type { Db } from '../../db/connect';
import { ApiError } from '../../pipeline/errors';
import type { RateLimits } from '../../pipeline/ratelimit';
import { dropChunks, joinChunks, KEEP_MINUTES, MAX_FILE_BYTES, CHUNK_BYTES, missingChunks, refusal } from './chunks';

export interface Outcome { state: 'ok' | 'error' | 'not_found' | 'assembling'; missingChunks: string[]; detail: string | null; result?: Record<string, unknown> | null }

/** One file to assemble: the organisation's kind (`bundle`, `dif`), its checksum, chunks, and what it is for (`target`: the projects, release…). */
export interface Assembly {
  kind: 'bundle' | 'dif'; checksum: string; chunks: string[]; target: string;
  /** Chunks other files of the same request are still to be assembled from: not dropped with this file's. */
  shared?: string[];
}

/** A claim older than this is taken to be from a process that died at it: another request may take it over. */
const STALE_CLAIM_MINUTES = 5;

type Row = { state: Outcome['state']; detail: string | null; result: Record<string, unknown> | null };

/**
 * Assembles a file once: a kept outcome (or a live claim) for the same file
 * and target is answered as it is; else missing chunks are asked for; else
 * the request claims the file, spends one point of `bucket` (the whole file
 * counts as one upload, however many chunks it came in), joins it and runs
 * `store` on it.
 */
export async function assembleOnce(db: Db, limits: RateLimits, caller: Caller, a: Assembly, bucket: 'sourcemaps' | 'symbols',
  store: (file: Buffer) => Promise<Record<string, unknown> | null>): Promise<Outcome> {
  const org = caller.organizationId;
  const key = sql`organization_id = ${org} and kind = ${a.kind} and checksum = ${a.checksum} and target = ${a.target}`;
  // Qualified: the claim's conflict clause also sees the proposed row (`excluded`).
  const live = sql`(error_upload_assemblies.created_at >= now() - make_interval(mins => ${KEEP_MINUTES})
    and (error_upload_assemblies.state <> 'assembling' or error_upload_assemblies.created_at >= now() - make_interval(mins => ${STALE_CLAIM_MINUTES})))`;
  const kept = async () => (await sql<Row>`select state, detail, result from error_upload_assemblies where ${key} and ${live}`.execute(db)).rows[0];
  const answer = (r: Row): Outcome => ({ ...r, missingChunks: [] });

  const before = await kept();
  if (before) return answer(before);
  if (a.chunks.length * CHUNK_BYTES > MAX_FILE_BYTES + CHUNK_BYTES) {
    return { state: 'error', missingChunks: [], detail: `The file is larger than ${MAX_FILE_BYTES} bytes, the most Vigil assembles.` };
  }
  const missing = await missingChunks(db, org, a.chunks);
  if (missing.length) {
    // Another request may have assembled the file since `before` was read: it records the outcome before (or as)
    // it drops the chunks, so a read after seeing them gone finds that outcome, which is the answer.
    const since = await kept();
    return since ? answer(since) : { state: 'not_found', missingChunks: missing, detail: null };
  }

  // The claim: a new row, or one that is no longer live. Whoever loses answers the winner's row. Its time (to the
  // microsecond, as text) marks it as this request's: a claim taken over as stale is no longer ours to settle.
  const claimed = await sql<{ at: string }>`insert into error_upload_assemblies (organization_id, kind, checksum, target, state)
    values (${org}, ${a.kind}, ${a.checksum}, ${a.target}, 'assembling')
    on conflict (organization_id, kind, checksum, target) do update set state = 'assembling', detail = null, result = null, created_at = now()
      where not ${live}
    returning created_at::text as at`.execute(db);
  if (claimed.rows.length === 0) {
    const other = await kept();
    return other ? answer(other) : { state: 'assembling', missingChunks: [], detail: null };
  }
  const mine = sql`${key} and state = 'assembling' and created_at = ${claimed.rows[0].at}::timestamptz`;
  let outcome: Outcome;
  try {
    await limits.consume(org, bucket);
    const file = await joinChunks(db, org, a.checksum, a.chunks);
    if (!file) {
      // Consumed by the request that took over a claim of ours gone stale (its outcome is the answer), or gone
      // with another file that shared them, or expired: then the tool is to send them again.
      await sql`delete from error_upload_assemblies where ${mine}`.execute(db);
      const since = await kept();
      return since ? answer(since) : { state: 'not_found', missingChunks: await missingChunks(db, org, a.chunks), detail: null };
    }
    if (file.length > MAX_FILE_BYTES) throw refusal(413, `The file is larger than ${MAX_FILE_BYTES} bytes, the most Vigil assembles.`);
    outcome = { state: 'ok', missingChunks: [], detail: null, result: await store(file) };
  } catch (e) {
    // A file Vigil cannot take is the upload's outcome, told in `detail`. Anything else (the bucket spent, a
    // server fault) gives the claim back, so the tool may try again.
    if (!(e instanceof ApiError) || e.status >= 500 || e.status === 429) {
      await sql`delete from error_upload_assemblies where ${mine}`.execute(db);
      throw e;
    }
    outcome = { state: 'error', missingChunks: [], detail: e.message };
  }
  // The outcome and the chunks' going, at once: nobody sees the chunks gone without the outcome that took them.
  // A claim taken over meanwhile is the new claimer's, and so are the chunks it is reading.
  const shared = new Set(a.shared ?? []);
  await db.transaction().execute(async (tx) => {
    const recorded = await sql`update error_upload_assemblies set state = ${outcome.state}, detail = ${outcome.detail},
      result = ${outcome.result ? JSON.stringify(outcome.result) : null}::jsonb, created_at = now() where ${mine} returning 1`.execute(tx);
    if (recorded.rows.length) await dropChunks(tx, org, a.chunks.filter((c) => !shared.has(c)));
  });
  return outcome;
}
