/**
 * What an assemble request answers, in the tools' terms: `not_found` with
 * the chunks still to send, or the outcome of the assembly (`ok`, or `error`
 * with the reason in `detail`, which the tools print). Assembly runs inside
 * the request, once: the outcome is kept (an hour, as chunks), so the tools'
 * repeated asks (sentry-cli 3 asks before and after sending chunks, and
 * polls) get it again without the work being redone or the organisation's
 * upload bucket charged twice.
 */
import { sql } from 'kysely';
import type { Caller } from '../../auth/caller';
import type { Db } from '../../db/connect';
import { ApiError } from '../../pipeline/errors';
import type { RateLimits } from '../../pipeline/ratelimit';
import { joinChunks, KEEP_MINUTES, MAX_FILE_BYTES, CHUNK_BYTES, missingChunks, refusal } from './chunks';

export interface Outcome { state: 'ok' | 'error' | 'not_found'; missingChunks: string[]; detail: string | null; result?: Record<string, unknown> | null }

/** One file to assemble: the organisation's kind (`bundle`, `dif`), its checksum, chunks, and what it is for (`target`: the projects, release…). */
export interface Assembly { kind: 'bundle' | 'dif'; checksum: string; chunks: string[]; target: string }

/**
 * Assembles a file once: an outcome kept for the same file and target is
 * answered as it is; else missing chunks are asked for; else one point of
 * `bucket` is spent (the whole file counts as one upload, however many
 * chunks it came in), the file is joined and `store` runs on it.
 */
export async function assembleOnce(db: Db, limits: RateLimits, caller: Caller, a: Assembly, bucket: 'sourcemaps' | 'symbols',
  store: (file: Buffer) => Promise<Record<string, unknown> | null>): Promise<Outcome> {
  const org = caller.organizationId;
  const kept = await sql<{ state: Outcome['state']; detail: string | null; result: Record<string, unknown> | null }>`select state, detail, result
    from error_upload_assemblies where organization_id = ${org} and kind = ${a.kind} and checksum = ${a.checksum} and target = ${a.target}
      and created_at >= now() - make_interval(mins => ${KEEP_MINUTES})`.execute(db);
  if (kept.rows[0]) return { ...kept.rows[0], missingChunks: [] };
  if (a.chunks.length * CHUNK_BYTES > MAX_FILE_BYTES + CHUNK_BYTES) {
    return { state: 'error', missingChunks: [], detail: `The file is larger than ${MAX_FILE_BYTES} bytes, the most Vigil assembles.` };
  }
  const missing = await missingChunks(db, org, a.chunks);
  if (missing.length) return { state: 'not_found', missingChunks: missing, detail: null };
  await limits.consume(org, bucket);
  let outcome: Outcome;
  try {
    const file = await joinChunks(db, org, a.checksum, a.chunks);
    if (!file) return { state: 'not_found', missingChunks: await missingChunks(db, org, a.chunks), detail: null };
    if (file.length > MAX_FILE_BYTES) throw refusal(413, `The file is larger than ${MAX_FILE_BYTES} bytes, the most Vigil assembles.`);
    outcome = { state: 'ok', missingChunks: [], detail: null, result: await store(file) };
  } catch (e) {
    // A file Vigil cannot take is the upload's outcome, told in `detail`; anything else is a server fault.
    if (!(e instanceof ApiError) || e.status >= 500) throw e;
    outcome = { state: 'error', missingChunks: [], detail: e.message };
  }
  await sql`insert into error_upload_assemblies (organization_id, kind, checksum, target, state, detail, result)
    values (${org}, ${a.kind}, ${a.checksum}, ${a.target}, ${outcome.state}, ${outcome.detail}, ${outcome.result ? JSON.stringify(outcome.result) : null}::jsonb)
    on conflict (organization_id, kind, checksum, target) do update set state = excluded.state, detail = excluded.detail, result = excluded.result, created_at = now()`.execute(db);
  return outcome;
}
