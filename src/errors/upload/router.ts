/**
 * The part of Sentry's web API (`/api/0/`) that sentry-cli and the bundler
 * plugins upload through, so a team's existing upload step works pointed at
 * Vigil (docs/errors.md lists the endpoints and the tool versions tested).
 * The auth token is a Vigil API key (Bearer), with the permissions of the
 * `/api/v1` operations it stands for (`monitor:create` to upload,
 * `monitor:read` to look up) and the same per-organisation buckets: a
 * bundle of maps is one upload in the `sourcemaps` bucket and a debug file
 * one in `symbols`, spent when it is assembled, however many chunks it came
 * in. Refusals are `{"detail": "…"}`, the field the tools print.
 */
import express, { type Request, type Response, type Router } from 'express';
import { authenticate } from '../../auth/authenticate';
import { can, type Caller } from '../../auth/caller';
import type { Permission } from '../../auth/roles';
import type { Db } from '../../db/connect';
import { ApiError } from '../../pipeline/errors';
import type { Bucket, RateLimits } from '../../pipeline/ratelimit';
import { BODY_LIMITS, drainUnread, readBody } from '../../transport/body';
import { assembleOnce } from './assembly';
import { storeBundle } from './bundles';
import { chunkOptions, multipartParts, refusal, SHA1, storeChunks } from './chunks';
import { assembleDifs, uploadZippedDifs } from './difs';
import { setProguardRelease } from '../symbols/upload';
import { createRelease, finalizeRelease, findProject, organizationBody, projectBody, visibleProjects, type UploadProject } from './projects';

export interface UploadDeps { db: Db; limits: RateLimits; log: { error(msg: string, e?: unknown): void } }

type Handler = (req: Request, caller: Caller) => Promise<[number, unknown]>;

/** A path parameter (Express 5 types allow arrays for wildcards, which these routes have none of). */
const param = (req: Request, name: string): string => String(req.params[name] ?? '');

/** The reason for a refusal as the tools show it. */
function detailOf(e: ApiError): string {
  if (e.status === 401) return 'Invalid token: give a Vigil API key (vk_…) as the auth token (--auth-token or SENTRY_AUTH_TOKEN).';
  if (e.code === 'rate_limited') return `${e.message} This organisation has used its ${e.vars.bucket} uploads for the hour.`;
  if (e.code === 'forbidden') return `${e.message} Uploads need a key whose role and scopes hold monitor:create.`;
  const field = e.fields[0];
  return field && !e.message.includes(field.field) ? `${e.message} (${field.field}: ${field.reason})` : e.message;
}

async function jsonBody(req: Request): Promise<Record<string, any>> {
  const raw = await readBody(req, BODY_LIMITS.sentryJson);
  try {
    const v = JSON.parse(raw.toString('utf8') || '{}');
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch { /* answered below */ }
  throw refusal(400, 'The body must be a JSON object.');
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The router mounted at `/api/0`. */
export function sentryUploadRouter(deps: UploadDeps): Router {
  const { db, limits } = deps;
  const router = express.Router();
  const route = (method: 'get' | 'post' | 'put', path: string, permission: Permission, bucket: Bucket | null, handler: Handler) => {
    // Metrics and logs name the endpoint by its pattern (never the raw path: versions, names).
    const operation = `sentry.${method}${path.replace(/:(\w+)/g, '{$1}').replace(/\/+$/, '').replace(/\//g, '.')}`;
    router[method](path, async (req, res) => {
      res.locals.operationId = operation;
      try {
        // The cheap refusals come before a byte of the body is read.
        const caller = await authenticate(db, req.headers.authorization);
        res.locals.organizationId = caller.organizationId;
        if (bucket) await limits.consume(caller.organizationId, bucket);
        if (!can(caller, permission)) throw new ApiError(403, 'forbidden', `This key lacks the permission ${permission}.`);
        const [status, body] = await handler(req, caller);
        res.status(status).json(body);
      } catch (e) {
        answerError(req, res, e, deps.log);
      }
    });
  };
  const projects = (caller: Caller, given: string[]) => Promise.all(given.map((p) => findProject(db, caller, p)));

  // `sentry-cli info`, the usual check of a CI's configuration: the key's powers in Sentry's scope names.
  route('get', '/', 'monitor:read', 'R', async (_req, caller) => [200, {
    user: null,
    auth: { scopes: can(caller, 'monitor:create') ? ['org:read', 'project:read', 'project:releases', 'project:write'] : ['org:read', 'project:read'] },
  }]);
  route('get', '/organizations/:org/', 'monitor:read', 'R', async (req, caller) => [200, await organizationBody(db, caller, param(req, 'org'))]);
  route('get', '/projects/:org/:project/', 'monitor:read', 'R', async (req, caller) => [200, projectBody(await findProject(db, caller, param(req, 'project')))]);

  // Asked before every upload: a key that may not upload is told so here, before any work.
  route('get', '/organizations/:org/chunk-upload/', 'monitor:create', 'R', async (req) =>
    [200, chunkOptions(`${req.protocol}://${req.get('host')}${req.baseUrl}/organizations/${encodeURIComponent(param(req, 'org'))}/chunk-upload/`)]);
  // Chunks spend no point: the file they make up does, once, when assembled; what waits is bounded per organisation.
  route('post', '/organizations/:org/chunk-upload/', 'monitor:create', null, async (req, caller) => {
    const body = await readBody(req, BODY_LIMITS.sentryChunks);
    await storeChunks(db, caller.organizationId, multipartParts(body, req.headers['content-type']));
    return [200, {}];
  });

  route('post', '/organizations/:org/artifactbundle/assemble/', 'monitor:create', null, async (req, caller) => {
    const b = await jsonBody(req);
    const chunks = strings(b.chunks);
    if (typeof b.checksum !== 'string' || !SHA1.test(b.checksum) || chunks.length !== (b.chunks?.length ?? 0) || chunks.some((c) => !SHA1.test(c))) {
      throw refusal(400, 'An artifact bundle needs its SHA-1 `checksum` and the list of its `chunks`.');
    }
    const given = strings(b.projects);
    if (given.length === 0) throw refusal(400, 'An artifact bundle needs at least one project (--project).');
    let targets: UploadProject[];
    try {
      targets = await projects(caller, given);
    } catch (e) {
      // Told as the bundle's outcome: sentry-cli reads a 404 here as "Release not found", which would mislead.
      if (e instanceof ApiError && e.status < 500) return [200, { state: 'error', missingChunks: [], detail: e.message }];
      throw e;
    }
    const release = typeof b.version === 'string' && b.version ? b.version : null;
    const target = JSON.stringify({ projects: targets.map((p) => p.id).sort(), release, dist: typeof b.dist === 'string' ? b.dist : null });
    const { result: _, ...outcome } = await assembleOnce(db, limits, caller, { kind: 'bundle', checksum: b.checksum, chunks, target }, 'sourcemaps',
      async (file) => storeBundle(db, caller, file, targets, release));
    return [200, outcome];
  });

  route('post', '/projects/:org/:project/files/difs/assemble/', 'monitor:create', null, async (req, caller) => {
    const project = await findProject(db, caller, param(req, 'project'));
    return [200, await assembleDifs(db, limits, caller, project, await jsonBody(req))];
  });

  route('post', '/projects/:org/:project/files/dsyms/', 'monitor:create', null, async (req, caller) => {
    const project = await findProject(db, caller, param(req, 'project'));
    const body = await readBody(req, BODY_LIMITS.symbols);
    return [201, await uploadZippedDifs(db, limits, caller, project, body, req.headers['content-type'])];
  });

  // sentry-cli 2's `upload-proguard --app-id --version --version-code`: the uploaded mapping's release.
  route('post', '/projects/:org/:project/files/proguard-artifact-releases/', 'monitor:create', 'W', async (req, caller) => {
    const project = await findProject(db, caller, param(req, 'project'));
    const b = await jsonBody(req);
    await setProguardRelease(db, caller, project.id, project.workspace_id, String(b.proguard_uuid ?? ''), String(b.release_name ?? ''));
    return [201, {}];
  });

  // Releases, as sentry-cli 3 (under the organisation) and 2 (under a project) create and finalise them.
  const newRelease: Handler = async (req, caller) => {
    const b = await jsonBody(req);
    const given = param(req, 'project') ? [param(req, 'project')] : strings(b.projects);
    return [201, await createRelease(db, await projects(caller, given), String(b.version ?? ''))];
  };
  const updateRelease: Handler = async (req, caller) => {
    const b = await jsonBody(req);
    const given = param(req, 'project') ? [param(req, 'project')] : strings(b.projects);
    // Without projects (the plugins' finalize under the organisation), the release of any project of the key's.
    const targets = given.length ? await projects(caller, given) : await visibleProjects(db, caller);
    return [200, await finalizeRelease(db, targets, param(req, 'version'), b.dateReleased)];
  };
  // sentry-cli 2 lists a release's files to skip those already uploaded: Vigil keeps maps, not release files, so none.
  const releaseFiles: Handler = async (req, caller) => {
    if (param(req, 'project')) await findProject(db, caller, param(req, 'project'));
    return [200, []];
  };
  route('get', '/organizations/:org/releases/:version/files/', 'monitor:read', 'R', releaseFiles);
  route('get', '/projects/:org/:project/releases/:version/files/', 'monitor:read', 'R', releaseFiles);
  route('post', '/organizations/:org/releases/', 'monitor:create', 'W', newRelease);
  route('post', '/projects/:org/:project/releases/', 'monitor:create', 'W', newRelease);
  route('put', '/organizations/:org/releases/:version/', 'monitor:create', 'W', updateRelease);
  route('put', '/projects/:org/:project/releases/:version/', 'monitor:create', 'W', updateRelease);

  router.use((req: Request, res: Response) => {
    res.status(404).json({ detail: `Vigil does not serve ${req.method} ${req.baseUrl}${req.path}: only the uploads of sentry-cli and the bundler plugins (docs/errors.md).` });
  });
  return router;
}

function answerError(req: Request, res: Response, e: unknown, log: UploadDeps['log']): void {
  if (res.headersSent) return;
  // A refusal before the body was read: the rest is read and dropped, so the tool gets the answer, not a reset.
  drainUnread(req);
  if (e instanceof ApiError) {
    for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
    res.status(e.status).json({ detail: detailOf(e) });
    return;
  }
  log.error('sentry upload failed', e);
  res.status(500).json({ detail: 'Vigil failed to handle the upload; the server log says why.' });
}
