/**
 * Chunked uploads as sentry-cli does them: the tool asks for the options
 * (`GET …/chunk-upload/`), splits each file into chunks named by their SHA-1,
 * posts the chunks as multipart parts (`file_gzip`: each part gzip-compressed,
 * or `file`), then asks for the file to be assembled from its chunks' names.
 * Chunks wait in PostgreSQL (not one process's memory or disk), so whichever
 * process gets the assemble request finds them; they go once their file is
 * assembled, expire after an hour otherwise, and an organisation holds at
 * most `MAX_PENDING_BYTES` of them.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { sql } from 'kysely';
import type { Db } from '../../db/connect';
import { ApiError } from '../../pipeline/errors';
import { MAX_SYMBOLS_BYTES } from '../symbols/upload';

/** A chunk's most bytes (decompressed): what the options tell the tools to cut files into. */
export const CHUNK_BYTES = 8 * 1024 * 1024;
/** Chunks a request carries at most (the request body limit, BODY_LIMITS.sentryChunks, follows from it). */
export const CHUNKS_PER_REQUEST = 4;
/** The largest file assembled from chunks: the symbols cap, the largest of the upload caps. */
export const MAX_FILE_BYTES = MAX_SYMBOLS_BYTES;
/** Chunks not yet assembled an organisation may hold at once. */
export const MAX_PENDING_BYTES = 512 * 1024 * 1024;
/** How long chunks (and assembly outcomes) are kept. */
export const KEEP_MINUTES = 60;

export const SHA1 = /^[0-9a-f]{40}$/;

/** `GET /api/0/organizations/{org}/chunk-upload/`: how the tools should cut and send files. */
export function chunkOptions(url: string) {
  return {
    url,
    chunkSize: CHUNK_BYTES,
    chunksPerRequest: CHUNKS_PER_REQUEST,
    maxRequestSize: CHUNK_BYTES * CHUNKS_PER_REQUEST,
    maxFileSize: MAX_FILE_BYTES,
    concurrency: 4,
    hashAlgorithm: 'sha1',
    compression: ['gzip'],
    // What Vigil assembles: artifact bundles (source maps), debug files (dSYMs) and ProGuard mappings.
    // `release_files` too: sentry-cli 2 chunks a release's maps (as an artifact bundle) only when it is
    // offered, else posts each file to the release one by one. Other kinds (PDBs, source bundles,
    // il2cpp…) are left out, so the tools do not send them.
    accept: ['debug_files', 'release_files', 'artifact_bundles', 'proguard'],
  };
}

/** A refusal the tools print: `detail` is the line the user reads. */
export function refusal(status: number, detail: string): ApiError {
  return new ApiError(status, status === 413 ? 'payload_too_large' : 'invalid_upload', detail);
}

interface Part { name: string; filename: string; data: Buffer }

/** The parts of a `multipart/form-data` body (the whole body is in memory, bounded by the body reader). */
export function multipartParts(body: Buffer, contentType: string | undefined): Part[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  if (!/^multipart\/form-data/i.test(contentType ?? '') || !boundary) throw refusal(400, 'Chunks must be sent as multipart/form-data.');
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: Part[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    let start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break; // the closing delimiter
    if (body.subarray(start, start + 2).toString() === '\r\n') start += 2;
    const next = body.indexOf(delimiter, start);
    if (next < 0) throw refusal(400, 'The multipart body ends before its closing boundary.');
    const headEnd = body.indexOf('\r\n\r\n', start);
    if (headEnd < 0 || headEnd > next) throw refusal(400, 'A multipart part has no headers.');
    const head = body.subarray(start, headEnd).toString('latin1');
    // The part's data ends with the CRLF that precedes the next delimiter.
    const end = body.subarray(next - 2, next).toString() === '\r\n' ? next - 2 : next;
    parts.push({
      name: /name="([^"]*)"/i.exec(head)?.[1] ?? '',
      filename: /filename="([^"]*)"/i.exec(head)?.[1] ?? '',
      data: body.subarray(headEnd + 4, end),
    });
    at = next;
  }
  return parts;
}

const sha1 = (b: Buffer) => crypto.createHash('sha1').update(b).digest('hex');

/** Deletes an organisation's chunks and assembly outcomes older than the keeping time (or everyone's, without one). */
export async function expireUploads(db: Db, organizationId?: string): Promise<void> {
  for (const table of ['error_upload_chunks', 'error_upload_assemblies']) {
    await sql`delete from ${sql.table(table)} where created_at < now() - make_interval(mins => ${KEEP_MINUTES})
      ${organizationId ? sql`and organization_id = ${organizationId}` : sql``}`.execute(db);
  }
}

/**
 * `POST …/chunk-upload/`: stores each part whose name (its filename) is the
 * SHA-1 of its decompressed bytes. A part that is not what its name says, or
 * larger than a chunk may be, refuses the whole request (nothing stored).
 */
export async function storeChunks(db: Db, organizationId: string, parts: Part[]): Promise<number> {
  const chunks: { checksum: string; data: Buffer }[] = [];
  for (const p of parts) {
    if (p.name !== 'file' && p.name !== 'file_gzip') continue;
    const checksum = p.filename.toLowerCase();
    if (!SHA1.test(checksum)) throw refusal(400, `A chunk must be named by its SHA-1 checksum (40 hex digits), not "${p.filename.slice(0, 60)}".`);
    let data = p.data;
    if (p.name === 'file_gzip') {
      try {
        data = zlib.gunzipSync(p.data, { maxOutputLength: CHUNK_BYTES + 1 });
      } catch (e) {
        if ((e as { code?: string }).code !== 'ERR_BUFFER_TOO_LARGE') throw refusal(400, `Chunk ${checksum} is not valid gzip.`);
        data = Buffer.alloc(CHUNK_BYTES + 1);
      }
    }
    if (data.length > CHUNK_BYTES) throw refusal(413, `Chunk ${checksum} is larger than ${CHUNK_BYTES} bytes, the chunk size Vigil asks for (GET chunk-upload).`);
    if (sha1(data) !== checksum) throw refusal(400, `Chunk ${checksum} does not match its checksum (its SHA-1 is ${sha1(data)}); it was damaged on the way.`);
    chunks.push({ checksum, data });
  }
  if (chunks.length === 0) return 0;
  await expireUploads(db, organizationId);
  await db.transaction().execute(async (tx) => {
    // One organisation's chunk writes in turn, so two requests cannot both pass the bound.
    await sql`select pg_advisory_xact_lock(hashtext(${`upload-chunks:${organizationId}`}))`.execute(tx);
    const held = await sql<{ n: string }>`select coalesce(sum(size_bytes), 0) as n from error_upload_chunks where organization_id = ${organizationId}`.execute(tx);
    // Chunks held already (the same bytes again) take no more room.
    const present = await sql<{ checksum: string }>`select checksum from error_upload_chunks where organization_id = ${organizationId}
      and checksum = any(${chunks.map((c) => c.checksum)}::text[])`.execute(tx);
    const known = new Set(present.rows.map((r) => r.checksum));
    const adding = chunks.filter((c) => !known.has(c.checksum)).reduce((n, c) => n + c.data.length, 0);
    if (Number(held.rows[0].n) + adding > MAX_PENDING_BYTES) {
      throw refusal(413, `This organisation already holds ${held.rows[0].n} bytes of chunks not yet assembled (at most ${MAX_PENDING_BYTES}; chunks expire after ${KEEP_MINUTES} minutes).`);
    }
    for (const c of chunks) {
      await sql`insert into error_upload_chunks (organization_id, checksum, data, size_bytes) values (${organizationId}, ${c.checksum}, ${c.data}, ${c.data.length})
        on conflict (organization_id, checksum) do update set created_at = now()`.execute(tx);
    }
  });
  return chunks.length;
}

/** Which of `checksums` the organisation has no chunk for. */
export async function missingChunks(db: Db, organizationId: string, checksums: string[]): Promise<string[]> {
  if (checksums.length === 0) return [];
  const have = await sql<{ checksum: string }>`select checksum from error_upload_chunks where organization_id = ${organizationId}
    and checksum = any(${[...new Set(checksums)]}::text[]) and created_at >= now() - make_interval(mins => ${KEEP_MINUTES})`.execute(db);
  const found = new Set(have.rows.map((r) => r.checksum));
  return [...new Set(checksums.filter((c) => !found.has(c)))];
}

/**
 * The file made of `chunks` in order, checked against its own SHA-1
 * (`checksum`); null when a chunk has gone meanwhile (expired).
 */
export async function joinChunks(db: Db, organizationId: string, checksum: string, chunks: string[]): Promise<Buffer | null> {
  const rows = await sql<{ checksum: string; data: Buffer }>`select checksum, data from error_upload_chunks where organization_id = ${organizationId}
    and checksum = any(${[...new Set(chunks)]}::text[])`.execute(db);
  const byName = new Map(rows.rows.map((r) => [r.checksum, r.data]));
  if (chunks.some((c) => !byName.has(c))) return null;
  const file = Buffer.concat(chunks.map((c) => byName.get(c)!));
  if (sha1(file) !== checksum) throw refusal(400, `The chunks put together do not match the file's checksum ${checksum}.`);
  return file;
}

/**
 * Drops chunks once the files they made are assembled (the outcome is kept; a new upload sends them again).
 * Only assembleOnce calls it, for the request that assembled the file, in the transaction recording the outcome.
 */
export async function dropChunks(db: Db, organizationId: string, checksums: string[]): Promise<void> {
  if (checksums.length === 0) return;
  await sql`delete from error_upload_chunks where organization_id = ${organizationId} and checksum = any(${[...new Set(checksums)]}::text[])`.execute(db);
}
