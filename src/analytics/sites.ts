/**
 * Analytics sites: what web analytics measures (docs/analytics.md). A site's
 * domain is unique on the server, because the Events API names a site by
 * domain; its `publicId` (16 random base62 characters, public by design) is
 * what Vigil's page script sends. Confined keys see their workspaces' sites
 * only.
 */
import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { sql } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { audit, diff } from '../domain/audit';
import { iso, visibleWorkspace, workspaceFilter } from '../domain/tenancy';
import type { Services } from '../pipeline/context';
import { conflict, invalid, notFound } from '../pipeline/errors';
import { SCRIPT_PATH } from './scriptRoute';

const AUDITED = ['name', 'domain', 'workspaceId'];
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A new public id: 16 base62 characters (95 bits), unbiased. */
export function newPublicId(): string {
  let out = '';
  while (out.length < 16) {
    for (const b of randomBytes(24)) if (b < 248 && out.length < 16) out += BASE62[b % 62];
  }
  return out;
}

/**
 * The stored form of a site's domain: trimmed, lower-case, without `www.` or
 * a trailing dot, international names in their `xn--` form. Anything but a
 * host name of two labels or more (a scheme, path, port, user) is 400 on
 * `field`.
 */
export function normaliseDomain(input: string, field = 'domain'): string {
  let d = input.trim().toLowerCase();
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(d)) throw invalid(field, 'must be a host name such as example.com, without a scheme');
  if (/[/?#]/.test(d)) throw invalid(field, 'must be a host name such as example.com, without a path');
  if (d.includes('@')) throw invalid(field, 'must be a host name such as example.com, without a user');
  if (d.includes(':')) throw invalid(field, 'must be a host name such as example.com, without a port');
  d = d.replace(/\.$/, '').replace(/^www\./, '');
  const ascii = /^[\x21-\x7e]*$/.test(d) ? d : domainToASCII(d);
  const labels = ascii.split('.');
  if (ascii.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l))) {
    throw invalid(field, 'must be a host name such as example.com');
  }
  return ascii;
}

function cleanName(name: string): string {
  const n = name.trim();
  if (!n) throw invalid('name', 'must not be blank');
  return n;
}

/** The line a site's pages carry to be measured by Vigil's own script. */
export function scriptTag(baseUrl: string, publicId: string): string {
  return `<script defer data-site="${publicId}" src="${baseUrl.replace(/\/+$/, '')}${SCRIPT_PATH}"></script>`;
}

type SiteRow = {
  id: string; workspace_id: string; name: string; domain: string; public_id: string;
  created_at: Date; traffic_alerting: boolean; views24h: number | string | null;
};

/** A site as the API returns it. */
export function siteOut(services: Pick<Services, 'baseUrl'>, r: SiteRow) {
  return {
    id: r.id, workspaceId: r.workspace_id, name: r.name, domain: r.domain, publicId: r.public_id,
    viewsLast24h: Number(r.views24h ?? 0), trafficAlerting: r.traffic_alerting,
    scriptTag: scriptTag(services.baseUrl(), r.public_id), createdAt: iso(r.created_at)!,
  };
}

/** The sites `caller` can see: its organisation's, within its workspace confinement. */
function visible(db: Db, caller: Caller) {
  let q = db.selectFrom('analytics_sites as s').where('s.organization_id', '=', caller.organizationId);
  const ws = workspaceFilter(caller.workspaceIds);
  if (ws) q = q.where('s.workspace_id', 'in', ws);
  return q;
}

/**
 * The visible sites with their pageviews of the last 24 hours (the current
 * hour and the 23 before it, from the hourly totals), one site or all.
 */
export function selectSites(db: Db, caller: Caller, now: Date, id?: string) {
  let q = visible(db, caller).select([
    's.id', 's.workspace_id', 's.name', 's.domain', 's.public_id', 's.created_at', 's.traffic_alerting',
    sql<string>`(select sum(h.pageviews) from analytics_hourly h where h.site_id = s.id and h.dimension = '' and h.value = ''
      and h.hour > ${now}::timestamptz - interval '24 hours')`.as('views24h'),
  ]);
  if (id !== undefined) q = q.where('s.id', '=', id);
  return q.orderBy('s.domain');
}

/** GET /analytics: the visible sites, by domain. */
export async function listSites(db: Db, services: Pick<Services, 'baseUrl'>, caller: Caller, now: Date) {
  return (await selectSites(db, caller, now).execute()).map((r) => siteOut(services, r));
}

/** The site `id` as the API returns it, or 404 for one the caller cannot see. */
export async function getSite(db: Db, services: Pick<Services, 'baseUrl'>, caller: Caller, id: string, now: Date) {
  const row = await selectSites(db, caller, now, id).executeTakeFirst();
  if (!row) throw notFound('analytics site', 'id');
  return siteOut(services, row);
}

async function findSite(db: Db, caller: Caller, id: string) {
  const row = await visible(db, caller).select(['s.id', 's.workspace_id', 's.name', 's.domain']).where('s.id', '=', id).executeTakeFirst();
  if (!row) throw notFound('analytics site', 'id');
  return row;
}

function domainTaken(domain: string) {
  return conflict('domain_taken', 'Another site already has this domain; a domain is measured by one site on this server.', { domain }, 'domain');
}

/** Refuses a domain another site has (any organisation); `except` is the site being changed. */
async function ensureDomainFree(db: Db, domain: string, except?: string) {
  let q = db.selectFrom('analytics_sites').select('id').where('domain', '=', domain);
  if (except) q = q.where('id', '<>', except);
  if (await q.executeTakeFirst()) throw domainTaken(domain);
}

/** A racing write that took the domain first answers as if it had been seen. */
function uniqueDomain(domain: string) {
  return (e: unknown): never => {
    if ((e as { code?: string; constraint?: string }).code === '23505' && /domain/.test((e as { constraint?: string }).constraint ?? '')) throw domainTaken(domain);
    throw e;
  };
}

/** POST /analytics: a new site in a workspace the caller can see. */
export async function createSite(db: Db, services: Pick<Services, 'baseUrl'>, caller: Caller, body: { domain: string; workspaceId: string; name?: string }, now: Date) {
  const ws = await visibleWorkspace(db, caller, body.workspaceId);
  const domain = normaliseDomain(body.domain);
  const name = body.name === undefined ? domain : cleanName(body.name);
  await ensureDomainFree(db, domain);
  const id = newId('site');
  await db.transaction().execute(async (tx) => {
    await tx.insertInto('analytics_sites').values({ id, organization_id: caller.organizationId, workspace_id: ws.id, name, domain, public_id: newPublicId() }).execute();
    await audit(tx, caller, { action: 'analytics_site.created', resourceType: 'analytics_site', resourceId: id, workspaceId: ws.id, changes: diff(null, { name, domain, workspaceId: ws.id }, AUDITED) });
  }).catch(uniqueDomain(domain));
  return getSite(db, services, caller, id, now);
}

/** PATCH /analytics/{id}: name and/or domain; the public id never changes. */
export async function updateSite(db: Db, services: Pick<Services, 'baseUrl'>, caller: Caller, id: string, body: { name?: string; domain?: string }, now: Date) {
  const before = await findSite(db, caller, id);
  const after = {
    name: body.name === undefined ? before.name : cleanName(body.name),
    domain: body.domain === undefined ? before.domain : normaliseDomain(body.domain),
  };
  if (after.domain !== before.domain) await ensureDomainFree(db, after.domain, id);
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('analytics_sites').set(after).where('id', '=', id).execute();
    await audit(tx, caller, { action: 'analytics_site.updated', resourceType: 'analytics_site', resourceId: id, workspaceId: before.workspace_id,
      changes: diff(before, after, AUDITED) });
  }).catch(uniqueDomain(after.domain));
  return getSite(db, services, caller, id, now);
}

/** DELETE /analytics/{id}: with its events, roll-ups and traffic incidents (by cascade) and the events still buffered. */
export async function deleteSite(db: Db, caller: Caller, id: string) {
  const before = await findSite(db, caller, id);
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('analytics_buffer').where('site_id', '=', id).execute();
    await tx.deleteFrom('analytics_sites').where('id', '=', id).execute();
    await audit(tx, caller, { action: 'analytics_site.deleted', resourceType: 'analytics_site', resourceId: id, workspaceId: before.workspace_id,
      changes: diff({ name: before.name, domain: before.domain, workspaceId: before.workspace_id }, null, AUDITED) });
  });
  return { id, deleted: true as const };
}
