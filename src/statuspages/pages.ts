/**
 * Status pages as the API manages them: GET/POST /status-pages, GET/PATCH/
 * DELETE /status-pages/{id}, components. A page belongs to one workspace;
 * a confined key sees only its workspaces' pages (others answer 404 like
 * missing ones). Every change is audited; the password never is.
 */
import { sql, type Selectable } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import type { StatusPagesTable } from '../db/schema';
import { newId, randomBase32 } from '../crypto/ids';
import { ApiError, conflict, invalid, limitReached, notFound } from '../pipeline/errors';
import { audit, diff, type Change } from '../domain/audit';
import { iso, visibleWorkspace } from '../domain/tenancy';
import { slugify } from '../domain/workspaces';
import {
  hashPassword, parseDomain, parseLanguage, parseLogoUrl, passwordRequired, sanitizeCss, type Visibility,
} from './settings';
import { verificationOut } from './domains';
import { componentsOf, visiblePage, visiblePages } from './repo';
import { lockParent, lockParentForChange, serialiseCreates } from '../domain/parents';

type Row = Selectable<StatusPagesTable>;

/** Fields the audit log records with their values; the password and the CSS are recorded as changed only. */
const AUDITED = ['name', 'slug', 'workspaceId', 'visibility', 'headline', 'description', 'logoUrl', 'themeAccent', 'language', 'historyDays',
  'showResponseTimes', 'showIncidentHistory', 'subscribersEnabled', 'hideServiceBranding', 'groupByHost', 'customDomain'];

function summaryOut(r: Row & { workspace_name: string; component_count: number }) {
  return {
    id: r.id, name: r.name, slug: r.slug, visibility: r.visibility as Visibility, customDomain: r.custom_domain,
    domainVerifiedAt: iso(r.domain_verified_at), subscribersEnabled: r.subscribers_enabled, componentCount: r.component_count,
    workspace: { id: r.workspace_id, name: r.workspace_name }, createdAt: iso(r.created_at)!,
  };
}

function detailOut(r: Row & { workspace_name: string }, components: Awaited<ReturnType<typeof componentsOf>>, baseUrl: string) {
  return {
    ...summaryOut({ ...r, component_count: components.length }),
    headline: r.headline, description: r.description, logoUrl: r.logo_url, customCss: r.custom_css, hasPassword: r.password_hash !== null,
    themeAccent: r.theme_accent, language: r.language, historyDays: r.history_days, showResponseTimes: r.show_response_times,
    showIncidentHistory: r.show_incident_history, hideServiceBranding: r.hide_service_branding, groupByHost: r.group_by_host,
    components: components.map((c, i) => ({ id: c.id, monitorId: c.monitor_id, displayName: c.display_name, position: i })),
    url: `${baseUrl}/status/${r.slug}`,
    domainVerification: verificationOut(r),
  };
}

/** The pages the caller can see, by name. */
export async function listStatusPages(db: Db, caller: Caller) {
  const rows = await visiblePages(db, caller)
    .select((eb) => eb.selectFrom('status_page_components as c').select(eb.fn.countAll<number>().as('n')).whereRef('c.page_id', '=', 'p.id').as('component_count'))
    .orderBy('p.name').orderBy('p.id').execute();
  return rows.map((r) => summaryOut({ ...r, component_count: Number(r.component_count ?? 0) }));
}

/** One page with its settings and components. */
export async function getStatusPage(db: Db, caller: Caller, id: string, baseUrl: string) {
  const row = await visiblePage(db, caller, id);
  return detailOut(row, await componentsOf(db, [id]), baseUrl);
}

/** A slug free across the service: the name's, or with `-2`, `-3`… (random after 50 tries). */
async function freeSlug(db: Db, name: string): Promise<string> {
  const base = slugify(name).slice(0, 50) || 'status';
  const taken = new Set((await db.selectFrom('status_pages').select('slug').where('slug', 'like', `${base}%`).execute()).map((r) => r.slug));
  for (let i = 1; i <= 50; i++) {
    const slug = i === 1 ? base : `${base}-${i}`;
    if (!taken.has(slug)) return slug;
  }
  return `${base}-${randomBase32(6)}`;
}

/** Creates a page (402 past the plan's page cap). The slug never changes. */
export async function createStatusPage(db: Db, caller: Caller, input: { name: string; workspaceId: string }, baseUrl: string) {
  const name = input.name.trim();
  if (!name || [...name].length > 100) throw invalid('name', 'must be 1 to 100 characters');
  const ws = await visibleWorkspace(db, caller, input.workspaceId);
  const id = newId('sp');
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction().execute(async (tx) => {
        // The workspace may have been deleted since it was read: 404, never a foreign-key failure.
        await lockParent(tx, 'workspaces', caller.organizationId, ws.id, 'workspace', 'workspaceId');
        // Creates in one organisation take turns, so the cap holds under concurrency.
        await serialiseCreates(tx, caller.organizationId);
        const cap = caller.plan.status_page_cap;
        if (cap !== null) {
          const { n } = await tx.selectFrom('status_pages').select((eb) => eb.fn.countAll<number>().as('n')).where('organization_id', '=', caller.organizationId).executeTakeFirstOrThrow();
          if (Number(n) >= cap) throw limitReached(caller.plan.code, 'status pages', cap, Number(n));
        }
        const slug = await freeSlug(tx, name);
        const row = await tx.insertInto('status_pages').values({ id, organization_id: caller.organizationId, workspace_id: ws.id, name, slug })
          .returningAll().executeTakeFirstOrThrow();
        const out = detailOut({ ...row, workspace_name: ws.name }, [], baseUrl);
        await audit(tx, caller, { action: 'status_page.created', resourceType: 'status_page', resourceId: id, workspaceId: ws.id,
          changes: diff(null, { ...out, workspaceId: ws.id }, ['name', 'slug', 'workspaceId']) });
        return out;
      });
    } catch (e) {
      // Two pages of the same name created at once in different organisations: the slug is taken meanwhile.
      if ((e as { code?: string }).code === '23505' && attempt < 3) continue;
      throw e;
    }
  }
}

/** The PATCH body (UpdateStatusPageBody). */
export interface UpdateStatusPageInput {
  name?: string; headline?: string | null; description?: string | null; logoUrl?: string | null; password?: string | null;
  customCss?: string | null; themeAccent?: string; language?: string; visibility?: string; historyDays?: number;
  showResponseTimes?: boolean; showIncidentHistory?: boolean; subscribersEnabled?: boolean; hideServiceBranding?: boolean;
  groupByHost?: boolean; customDomain?: string | null;
}

const emptyToNull = (v: string | null | undefined) => (v === undefined ? undefined : v === null || v.trim() === '' ? null : v);

/** Changes the fields sent; the rest stay. */
export async function updateStatusPage(db: Db, caller: Caller, id: string, input: UpdateStatusPageInput, baseUrl: string) {
  const before = await visiblePage(db, caller, id);
  const set: Partial<Record<keyof StatusPagesTable, unknown>> = {};
  if (input.name !== undefined) {
    const name = input.name.trim();
    if (!name || [...name].length > 100) throw invalid('name', 'must be 1 to 100 characters');
    set.name = name;
  }
  const headline = emptyToNull(input.headline);
  if (headline !== undefined) set.headline = headline?.trim() ?? null;
  const description = emptyToNull(input.description);
  if (description !== undefined) set.description = description;
  if (input.logoUrl !== undefined) set.logo_url = parseLogoUrl(input.logoUrl);
  if (input.customCss !== undefined) set.custom_css = sanitizeCss(input.customCss);
  if (input.themeAccent !== undefined) set.theme_accent = input.themeAccent.toLowerCase();
  if (input.language !== undefined) set.language = parseLanguage(input.language);
  if (input.historyDays !== undefined) set.history_days = input.historyDays;
  for (const [field, column] of [['showResponseTimes', 'show_response_times'], ['showIncidentHistory', 'show_incident_history'],
    ['subscribersEnabled', 'subscribers_enabled'], ['hideServiceBranding', 'hide_service_branding'], ['groupByHost', 'group_by_host']] as const) {
    if (input[field] !== undefined) set[column] = input[field];
  }
  const password = emptyToNull(input.password);
  if (password !== undefined) set.password_hash = password === null ? null : await hashPassword(password);
  if (input.visibility !== undefined) set.visibility = input.visibility;
  const visibility = (set.visibility ?? before.visibility) as string;
  const hasPassword = set.password_hash !== undefined ? set.password_hash !== null : before.password_hash !== null;
  if (visibility === 'password' && !hasPassword) throw passwordRequired();
  if (input.customDomain !== undefined) {
    const domain = parseDomain(input.customDomain, hostOf(baseUrl));
    if (domain !== before.custom_domain) {
      set.custom_domain = domain;
      set.domain_token = domain ? `vigil-verify=${randomBase32(32)}` : null;
      set.domain_verified_at = null;
      set.domain_checked_at = null;
      set.domain_found = [];
      set.domain_error = null;
    }
  }
  set.updated_at = new Date();
  return db.transaction().execute(async (tx) => {
    let row: Row | undefined;
    try {
      row = await tx.updateTable('status_pages').set(set as never).where('id', '=', id).where('organization_id', '=', caller.organizationId)
        .returningAll().executeTakeFirst();
    } catch (e) {
      if ((e as { code?: string; constraint?: string }).code === '23505') {
        throw conflict('custom_domain_taken', 'Another status page already uses this custom domain.', { customDomain: String(set.custom_domain) }, 'customDomain');
      }
      throw e;
    }
    // Deleted since it was read.
    if (!row) throw notFound('status page', 'id');
    const out = detailOut({ ...row, workspace_name: before.workspace_name }, await componentsOf(tx, [id]), baseUrl);
    const changes: Record<string, Change> = diff(detailOut(before, [], baseUrl), out, AUDITED);
    if (set.password_hash !== undefined) changes.password = { changed: true };
    if (set.custom_css !== undefined && set.custom_css !== before.custom_css) changes.customCss = { changed: true };
    if (Object.keys(changes).length) {
      await audit(tx, caller, { action: 'status_page.updated', resourceType: 'status_page', resourceId: id, workspaceId: row.workspace_id, changes });
    }
    return out;
  });
}

function hostOf(url: string): string | null {
  try { return new URL(url).hostname; } catch { return null; }
}

/** Deletes a page with its components and subscribers; the monitors stay. */
export async function deleteStatusPage(db: Db, caller: Caller, id: string, baseUrl: string) {
  const row = await visiblePage(db, caller, id);
  await db.transaction().execute(async (tx) => {
    const gone = await tx.deleteFrom('status_pages').where('id', '=', id).where('organization_id', '=', caller.organizationId).executeTakeFirst();
    // Deleted meanwhile by another request: that one recorded it.
    if (!Number(gone.numDeletedRows)) throw notFound('status page', 'id');
    await audit(tx, caller, { action: 'status_page.deleted', resourceType: 'status_page', resourceId: id, workspaceId: row.workspace_id,
      changes: diff(detailOut(row, [], baseUrl), null, ['name', 'slug', 'customDomain']) });
  });
  return { id, deleted: true as const };
}

/**
 * Places a monitor on the page after the existing components. The monitor
 * must be in the page's workspace: a monitor of another workspace (or one the
 * key cannot see) is 400 naming `monitorId`; one of another organisation is
 * 404 like a missing one; one already on the page is 409.
 */
export async function addComponent(db: Db, caller: Caller, id: string, input: { monitorId: string; displayName?: string | null }) {
  const page = await visiblePage(db, caller, id);
  const monitor = await db.selectFrom('monitors').select(['id', 'workspace_id']).where('id', '=', input.monitorId)
    .where('organization_id', '=', caller.organizationId).executeTakeFirst();
  // Outside the key's workspaces a monitor does not exist for it (404); inside, the wrong workspace is 400.
  if (!monitor || (caller.workspaceIds !== null && !caller.workspaceIds.includes(monitor.workspace_id))) throw notFound('monitor', 'monitorId');
  if (monitor.workspace_id !== page.workspace_id) throw invalid('monitorId', "must be a monitor of the page's workspace");
  const displayName = input.displayName?.trim() || null;
  if (displayName && [...displayName].length > 100) throw invalid('displayName', 'must be at most 100 characters');
  return db.transaction().execute(async (tx) => {
    // Additions to one page take turns, so positions stay distinct; the page, then the monitor, may have been
    // deleted since they were read: 404, never a foreign-key failure (src/domain/parents.ts).
    await lockParentForChange(tx, 'status_pages', caller.organizationId, id, 'status page', 'id');
    await lockParent(tx, 'monitors', caller.organizationId, monitor.id, 'monitor', 'monitorId');
    const exists = await tx.selectFrom('status_page_components').select('id').where('page_id', '=', id).where('monitor_id', '=', monitor.id).executeTakeFirst();
    if (exists) throw conflict('component_exists', 'This monitor is already on the page.', { componentId: exists.id }, 'monitorId');
    const { next } = await tx.selectFrom('status_page_components').select(sql<number>`coalesce(max(position) + 1, 0)`.as('next'))
      .where('page_id', '=', id).executeTakeFirstOrThrow();
    const row = await tx.insertInto('status_page_components').values({
      id: newId('spc'), page_id: id, organization_id: caller.organizationId, monitor_id: monitor.id, display_name: displayName, position: Number(next),
    }).returningAll().executeTakeFirstOrThrow();
    await tx.updateTable('status_pages').set({ updated_at: new Date() }).where('id', '=', id).execute();
    await audit(tx, caller, { action: 'status_page.component_added', resourceType: 'status_page', resourceId: id, workspaceId: page.workspace_id,
      changes: { component: { from: null, to: { id: row.id, monitorId: monitor.id, displayName } } } });
    const position = (await componentsOf(tx, [id])).findIndex((c) => c.id === row.id);
    return { id: row.id, monitorId: row.monitor_id, displayName: row.display_name, position };
  });
}

/** Removes a component (by query `component` or body `componentId`); the monitor stays. */
export async function removeComponent(db: Db, caller: Caller, id: string, componentId: string | undefined) {
  if (!componentId) throw new ApiError(400, 'missing_field', 'Name the component: query `component` or body `componentId`.', { field: 'componentId' }, [{ field: 'componentId', reason: 'is required' }]);
  const page = await visiblePage(db, caller, id);
  let removed = componentId;
  await db.transaction().execute(async (tx) => {
    // A component is a monitor placed on the page, at most once: its id or its monitor's id names it.
    const gone = await tx.deleteFrom('status_page_components').where('page_id', '=', id)
      .where((eb) => eb.or([eb('id', '=', componentId), eb('monitor_id', '=', componentId)]))
      .returning(['id', 'monitor_id', 'display_name']).executeTakeFirst();
    if (!gone) throw notFound('component', 'componentId');
    await tx.updateTable('status_pages').set({ updated_at: new Date() }).where('id', '=', id).execute();
    await audit(tx, caller, { action: 'status_page.component_removed', resourceType: 'status_page', resourceId: id, workspaceId: page.workspace_id,
      changes: { component: { from: { id: gone.id, monitorId: gone.monitor_id, displayName: gone.display_name }, to: null } } });
    removed = gone.id;
  });
  return { id: removed, deleted: true as const };
}
