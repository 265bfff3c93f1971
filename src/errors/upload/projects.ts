/**
 * Organisations, projects and releases as the upload tools look them up.
 * The organisation slug in a URL may be anything: the key decides the
 * organisation, as everywhere in Vigil. A project is named by its `ref` (the
 * number in its DSN) or its name (as given, or as a Sentry slug: lowercase,
 * other characters as dashes), among the projects the key can see.
 */
import { sql } from 'kysely';
import type { Caller } from '../../auth/caller';
import type { Db } from '../../db/connect';
import { ApiError } from '../../pipeline/errors';

export interface UploadProject { id: string; ref: string; name: string; platform: string | null; workspace_id: string }

const slugOf = (name: string) => name.toLowerCase().replace(/[^a-z0-9_]+/g, '-').replace(/^-+|-+$/g, '');

/** The error projects the caller sees. */
export async function visibleProjects(db: Db, caller: Caller): Promise<UploadProject[]> {
  let q = db.selectFrom('error_projects').select(['id', 'ref', 'name', 'platform', 'workspace_id']).where('organization_id', '=', caller.organizationId);
  if (caller.workspaceIds !== null) q = q.where('workspace_id', 'in', caller.workspaceIds.length ? [...caller.workspaceIds] : ['']);
  // `ref` is a bigint: compared as text.
  return (await q.orderBy('ref').execute()).map((p) => ({ ...p, ref: String(p.ref) }));
}

/** The project `given` names, among those the caller sees; 404 with a detail the tools print. */
export async function findProject(db: Db, caller: Caller, given: string): Promise<UploadProject> {
  const all = await visibleProjects(db, caller);
  const byRef = /^\d{1,15}$/.test(given) ? all.filter((p) => p.ref === given) : [];
  const exact = all.filter((p) => p.name === given);
  const slug = all.filter((p) => slugOf(p.name) === given.toLowerCase());
  const found = [byRef, exact, slug].find((m) => m.length > 0) ?? [];
  if (found.length === 1) return found[0];
  if (found.length > 1) {
    throw new ApiError(409, 'ambiguous_project', `Several projects are named "${given}" (refs ${found.map((p) => p.ref).join(', ')}): name the project by its ref.`);
  }
  throw new ApiError(404, 'not_found', `Project not found: no error project "${given.slice(0, 100)}" (by ref or name) among those this API key sees (its organisation, its workspaces).`);
}

/** A project as the tools read one. */
export function projectBody(p: UploadProject) {
  return { id: p.ref, slug: slugOf(p.name) || p.ref, name: p.name, platform: p.platform, status: 'active' };
}

/** An organisation as the tools read one: the caller's, under whatever slug was asked. */
export async function organizationBody(db: Db, caller: Caller, slug: string) {
  const org = await db.selectFrom('organizations').select(['id', 'name']).where('id', '=', caller.organizationId).executeTakeFirstOrThrow();
  return { id: org.id, slug, name: org.name, status: { id: 'active', name: 'active' }, features: [] };
}

/**
 * Creating a release records it for each project (events' releases are
 * recorded the same way when they arrive), so its order among the project's
 * releases is from its creation: a release created before its first event
 * counts as newer than those seen before it.
 */
export async function createRelease(db: Db, projects: UploadProject[], version: string) {
  checkVersion(version);
  if (projects.length === 0) throw new ApiError(400, 'invalid_field', 'A release needs at least one project.');
  for (const p of projects) {
    await sql`insert into error_releases (project_id, release) values (${p.id}, ${version}) on conflict do nothing`.execute(db);
  }
  return releaseBody(projects, version, null);
}

/** Finalising a release: Vigil keeps no release dates, so it checks the release exists for the projects and answers it. */
export async function finalizeRelease(db: Db, projects: UploadProject[], version: string, dateReleased: unknown) {
  checkVersion(version);
  const rows = projects.length ? await db.selectFrom('error_releases').select('project_id').where('release', '=', version)
    .where('project_id', 'in', projects.map((p) => p.id)).execute() : [];
  if (rows.length === 0) throw new ApiError(404, 'not_found', `Release not found: "${version.slice(0, 100)}" was neither created nor seen in an event of these projects.`);
  return releaseBody(projects.filter((p) => rows.some((r) => r.project_id === p.id)), version, typeof dateReleased === 'string' ? dateReleased : new Date().toISOString());
}

function checkVersion(version: string): void {
  // Sentry's own rule for release names, which the SDKs follow: no slashes or newlines, not "." or "..", at most 200 characters.
  if (!version || version.length > 200 || /[\n\r\t\f/\\]/.test(version) || version === '.' || version === '..' || version === ' ') {
    throw new ApiError(400, 'invalid_field', `Invalid release version "${version.slice(0, 100)}": 1 to 200 characters, no slashes or line breaks.`);
  }
}

function releaseBody(projects: UploadProject[], version: string, dateReleased: string | null) {
  return {
    version, shortVersion: version, ref: null, url: null, dateCreated: new Date().toISOString(), dateReleased, lastEvent: null, newGroups: 0,
    projects: projects.map((p) => ({ slug: projectBody(p).slug, name: p.name })),
  };
}
