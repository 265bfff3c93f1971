/**
 * The two exports (spec: API keys, audit, account, billing, me, search):
 * one entity as a file (GET /export/{entity}) and every readable entity as a
 * zip with a manifest (GET /export). Both stream: rows come from a cursor as
 * the client reads (see cursor.ts), so the size of an export does not show
 * in the process's memory. The rate limit (`export` bucket, 6 an hour per
 * organisation, both routes together) is spent by the pipeline before this.
 */
import { Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import type { FileOutput } from '../../gen/routes';
import { can, type Caller } from '../auth/caller';
import type { SecretBox } from '../crypto/secrets';
import type { Db } from '../db/connect';
import { ApiError, forbidden } from '../pipeline/errors';
import { ExportSession } from './cursor';
import type { ExportEntity, ExportScope } from './entity';
import { CONTENT_TYPES, fileChunks, type ExportFormat, type Tally } from './format';
import { ENTITIES, ENTITY_NAMES, isEntityName, type EntityName } from './registry';
import { askedWindow, entityWindow, type AskedWindow } from './window';

/** What an export needs of the request. */
export interface ExportContext { db: Db; caller: Caller; secrets: SecretBox; now: Date }

/** The query of both routes (validated by the contract: format csv|json, from/to RFC 3339, bom boolean). */
export interface ExportQuery { format?: 'csv' | 'json'; from?: string; to?: string; bom?: boolean }

const day = (d: Date) => d.toISOString().slice(0, 10);

function scopeOf(caller: Caller, window: AskedWindow): ExportScope {
  return { organizationId: caller.organizationId, workspaceIds: caller.workspaceIds, from: window.from, to: window.to };
}

/** The chunks of one entity's file, read through `session`. */
function chunksOf(ctx: ExportContext, session: ExportSession, name: EntityName, window: AskedWindow, format: ExportFormat, bom: boolean, tally: Tally) {
  const entity = ENTITIES[name];
  const open = () => session.cursor(entity.query(ctx.db, scopeOf(ctx.caller, window)));
  return fileChunks(entity, name, open, format, bom && format === 'csv', { secrets: ctx.secrets }, tally);
}

/** `chunks`, then `end()` however the reading stops (finished, failed, or abandoned by the client). */
async function* endingWith<T>(chunks: AsyncIterable<T>, end: () => Promise<void>): AsyncGenerator<T> {
  try {
    yield* chunks;
  } finally {
    await end();
  }
}

/** GET /export/{entity}: 404 for an unknown entity, 403 without its permission, 400 for a window it refuses. */
export async function exportEntity(ctx: ExportContext, name: string, query: ExportQuery): Promise<FileOutput> {
  if (!isEntityName(name)) {
    throw new ApiError(404, 'not_found', `No export entity ${JSON.stringify(name.slice(0, 100))}; the entities are ${ENTITY_NAMES.join(', ')}.`,
      { resource: 'export entity' }, [{ field: 'entity', reason: 'no such export entity' }]);
  }
  const entity = ENTITIES[name];
  if (!can(ctx.caller, entity.permission)) throw forbidden(entity.permission);
  const window = entityWindow(entity, name, askedWindow(query, ctx.now));
  const format = query.format ?? 'csv';
  const session = new ExportSession(ctx.db);
  return {
    content: endingWith(chunksOf(ctx, session, name, window, format, query.bom === true, { rows: 0 }), () => session.end()),
    contentType: CONTENT_TYPES[format],
    filename: `vigil-${name}-${day(ctx.now)}.${format}`,
  };
}

/** Why an entity is not in a zip. */
interface Missing { entity: EntityName; reason: 'no_permission' | 'not_in_plan'; permission: string; message: string }

function missing(caller: Caller, name: EntityName, entity: ExportEntity): Missing {
  const permission = entity.permission;
  // The role and key grant it, the plan does not (the audit log below Business).
  if (caller.permissions.has(permission)) {
    return { entity: name, reason: 'not_in_plan', permission, message: `The ${caller.plan.name} plan does not include ${name}.` };
  }
  return { entity: name, reason: 'no_permission', permission, message: `This key lacks the permission ${permission}.` };
}

/** One file of a zip, as the manifest describes it. */
interface ZipFileEntry { entity: EntityName; file: string; window: AskedWindow; tally: Tally }

/** The manifest, once every file is written. */
function manifest(ctx: ExportContext, format: ExportFormat, asked: AskedWindow, files: ZipFileEntry[], absent: Missing[]) {
  return {
    exportedAt: ctx.now.toISOString(),
    organizationId: ctx.caller.organizationId,
    workspaceIds: ctx.caller.workspaceIds,
    format,
    from: asked.from?.toISOString() ?? null,
    to: asked.to.toISOString(),
    files: files.map((f) => ({ entity: f.entity, file: f.file, rows: f.tally.rows, from: f.window.from?.toISOString() ?? null, to: f.window.to.toISOString() })),
    missing: absent,
  };
}

/**
 * GET /export: a zip of every entity the caller can read, then
 * `manifest.json` (written last: it counts the rows). All files come from one
 * snapshot. 403 when the caller can read none.
 */
export async function exportAll(ctx: ExportContext, query: ExportQuery): Promise<FileOutput> {
  const asked = askedWindow(query, ctx.now);
  const format = query.format ?? 'csv';
  const files: ZipFileEntry[] = [];
  const absent: Missing[] = [];
  for (const name of ENTITY_NAMES) {
    const entity = ENTITIES[name];
    if (can(ctx.caller, entity.permission)) files.push({ entity: name, file: `${name}.${format}`, window: entityWindow(entity, name, asked), tally: { rows: 0 } });
    else absent.push(missing(ctx.caller, name, entity));
  }
  if (files.length === 0) {
    const all = [...new Set(ENTITY_NAMES.map((n) => ENTITIES[n].permission))];
    throw new ApiError(403, 'forbidden', `This key can read none of the export entities (they need ${all.join(', ')}).`, { permission: all.join(',') });
  }

  const session = new ExportSession(ctx.db);
  const zip = new ZipFile();
  const out = zip.outputStream as Readable;
  let current: Readable | null = null;
  zip.on('error', (e: Error) => out.destroy(e));
  for (const f of files) {
    zip.addReadStreamLazy(f.file, { mtime: ctx.now }, (cb) => {
      // Opened only when the zip gets to this file: one cursor at a time.
      current = Readable.from(chunksOf(ctx, session, f.entity, f.window, format, query.bom === true, f.tally), { objectMode: false });
      current.on('error', (e) => zip.emit('error', e));
      cb(null, current);
    });
  }
  zip.addReadStreamLazy('manifest.json', { mtime: ctx.now }, (cb) => {
    session.end().then(
      () => cb(null, Readable.from([Buffer.from(`${JSON.stringify(manifest(ctx, format, asked, files, absent), null, 2)}\n`, 'utf8')])),
      (e) => cb(e, null as never),
    );
  });
  zip.end();
  // Finished, failed or abandoned by the client: the open cursor goes, then the transaction.
  out.once('close', () => {
    (current as Readable | null)?.destroy();
    void session.end();
  });
  return { content: out, contentType: 'application/zip', filename: `vigil-export-${day(ctx.now)}.zip` };
}
