import { Feed } from 'feed';
import { sql } from 'kysely';
import type { Caller } from '../auth/caller';
import { requireWholeOrganisation } from '../auth/confinement';
import type { Db } from '../db/connect';
import { hashToken, newToken, tokenPrefix } from '../crypto/tokens';
import { ApiError } from '../pipeline/errors';
import { audit } from './audit';
import { iso } from './tenancy';
import { escapeHtml, xmlSafe } from '../pipeline/html';

/**
 * The incident feed of an organisation (spec: Events): one RSS 2.0 and one
 * Atom URL, `{base_url}/feeds/incidents/<token>/feed.xml|atom.xml`, whose
 * token is the only credential. The token is stored as its SHA-256 only
 * (table feed_tokens, one row per organisation), so the URLs are shown once,
 * when the token is created or replaced.
 */

/** The kind prefix of feed tokens (`ft_<43 base64url chars>`). */
const TOKEN_KIND = 'ft';
/** How many incidents a feed holds, newest first. */
export const FEED_SIZE = 100;

/** The two renderings of the feed. */
export type FeedFormat = 'rss' | 'atom';

/** The file name of each rendering in the feed URL. */
export const FEED_FILES: Record<FeedFormat, string> = { rss: 'feed.xml', atom: 'atom.xml' };

/** The content type each rendering is served with. */
export const FEED_TYPES: Record<FeedFormat, string> = {
  rss: 'application/rss+xml; charset=utf-8',
  atom: 'application/atom+xml; charset=utf-8',
};

/** The feed covers every workspace, so only an unconfined caller may change it. */
function refuseConfined(caller: Caller, what: string): void {
  requireWholeOrganisation(caller, 'notification_channel:manage', `${what} the incident feed, which covers every workspace`);
}

/** Whether the organisation has a feed token, and since when (never the token or its URLs). */
export async function feedStatus(db: Db, caller: Caller) {
  const row = await db.selectFrom('feed_tokens').select('created_at')
    .where('organization_id', '=', caller.organizationId).executeTakeFirst();
  return { active: !!row, createdAt: iso(row?.created_at) };
}

/**
 * Creates the feed token or replaces it (the old URLs answer 404 from the
 * next request) and returns both URLs: the only time they are shown. The
 * audit entry records that the token was created or replaced, never it.
 */
export async function rotateFeed(db: Db, caller: Caller, baseUrl: string) {
  refuseConfined(caller, 'create or replace');
  const { token } = newToken(TOKEN_KIND);
  return db.transaction().execute(async (tx) => {
    const row = await tx.insertInto('feed_tokens')
      .values({ organization_id: caller.organizationId, token_hash: hashToken(token), created_at: new Date() })
      .onConflict((oc) => oc.column('organization_id').doUpdateSet((eb) => ({ token_hash: eb.ref('excluded.token_hash'), created_at: eb.ref('excluded.created_at') })))
      // xmax is 0 on a freshly inserted row version: tells creation from replacement without a race.
      .returning(['created_at', sql<boolean>`(xmax = 0)`.as('inserted')])
      .executeTakeFirstOrThrow();
    await audit(tx, caller, row.inserted
      ? { action: 'incident_feed.created', resourceType: 'incident_feed', resourceId: null, changes: { active: { from: false, to: true } } }
      : { action: 'incident_feed.replaced', resourceType: 'incident_feed', resourceId: null, changes: { token: { changed: true } } });
    const base = `${baseUrl}/feeds/incidents/${token}`;
    return { rssUrl: `${base}/${FEED_FILES.rss}`, atomUrl: `${base}/${FEED_FILES.atom}`, createdAt: iso(row.created_at)! };
  });
}

/**
 * Revokes the feed token: its URLs answer 404 from the next request.
 * Idempotent: revoking when there is no feed answers the same and records nothing.
 */
export async function revokeFeed(db: Db, caller: Caller) {
  refuseConfined(caller, 'revoke');
  await db.transaction().execute(async (tx) => {
    const gone = await tx.deleteFrom('feed_tokens').where('organization_id', '=', caller.organizationId).returning('organization_id').executeTakeFirst();
    if (gone) await audit(tx, caller, { action: 'incident_feed.revoked', resourceType: 'incident_feed', resourceId: null, changes: { active: { from: true, to: false } } });
  });
  return { ok: true as const };
}

/** The organisation a feed token belongs to; null for a malformed, unknown, replaced or revoked token alike. */
export async function feedOrganization(db: Db, token: string): Promise<string | null> {
  if (!token.startsWith(`${TOKEN_KIND}_`) || !tokenPrefix(token)) return null;
  const row = await db.selectFrom('feed_tokens').select('organization_id')
    .where('token_hash', '=', hashToken(token)).executeTakeFirst();
  return row?.organization_id ?? null;
}

/** One incident as the feed shows it: nothing beyond what the spec lists (no postmortem, config, probe or region). */
export interface FeedEntry {
  id: string;
  monitorName: string;
  cause: string;
  severity: string;
  status: string;
  startedAt: Date;
  acknowledgedAt: Date | null;
  resolvedAt: Date | null;
  updates: { at: Date; text: string }[];
}

/** The newest incidents of the organisation across all workspaces, with their public updates (oldest first). */
export async function feedEntries(db: Db, organizationId: string): Promise<{ organizationName: string; entries: FeedEntry[] }> {
  const org = await db.selectFrom('organizations').select('name').where('id', '=', organizationId).executeTakeFirst();
  // Read columns are listed one by one: postmortems and monitor config are never selected.
  const rows = await db.selectFrom('incidents as i').leftJoin('monitors as m', 'm.id', 'i.monitor_id')
    .select(['i.id', 'i.title', 'm.name as monitor_name', 'i.cause', 'i.severity', 'i.status', 'i.started_at', 'i.acknowledged_at', 'i.resolved_at'])
    .where('i.organization_id', '=', organizationId)
    .orderBy('i.started_at', 'desc').orderBy('i.id', 'desc').limit(FEED_SIZE).execute();
  const events = rows.length === 0 ? [] : await db.selectFrom('incident_events').select(['incident_id', 'at', 'kind', 'message'])
    .where('organization_id', '=', organizationId).where('public', '=', true)
    .where('incident_id', 'in', rows.map((r) => r.id)).orderBy('seq').execute();
  const updates = new Map<string, FeedEntry['updates']>();
  for (const e of events) {
    const list = updates.get(e.incident_id) ?? [];
    list.push({ at: e.at, text: e.message ?? e.kind.replace(/_/g, ' ') });
    updates.set(e.incident_id, list);
  }
  const entries = rows.map((r): FeedEntry => ({
    id: r.id, monitorName: r.monitor_name ?? r.title, cause: r.cause, severity: r.severity, status: r.status,
    startedAt: r.started_at, acknowledgedAt: r.acknowledged_at, resolvedAt: r.resolved_at, updates: updates.get(r.id) ?? [],
  }));
  return { organizationName: org?.name ?? '', entries };
}


/**
 * Escapes text for the HTML the feed carries (Atom `type="html"`, RSS
 * description). Escaping `>` also keeps `]]>` out of the CDATA sections.
 */
function html(s: string): string {
  return escapeHtml(xmlSafe(s));
}

/** The HTML summary of one incident: cause, severity, status, times and public updates. */
function describe(e: FeedEntry): string {
  const facts: [string, string][] = [
    ['Monitor', e.monitorName], ['Status', e.status], ['Severity', e.severity], ['Cause', e.cause.replace(/_/g, ' ')],
    ['Started', e.startedAt.toISOString()], ['Ended', e.resolvedAt ? e.resolvedAt.toISOString() : 'ongoing'],
  ];
  let out = `<ul>${facts.map(([k, v]) => `<li>${k}: ${html(v)}</li>`).join('')}</ul>`;
  if (e.updates.length) {
    out += `<p>Updates:</p><ul>${e.updates.map((u) => `<li>${u.at.toISOString()}: ${html(u.text)}</li>`).join('')}</ul>`;
  }
  return out;
}

/**
 * Renders the feed. Entries link to the base URL: there is no public incident
 * page yet. The RSS guid is the incident id (marked not a permalink); the Atom
 * id is `urn:vigil:incident:<id>` because Atom ids must be absolute IRIs. The
 * feed's own URL (which holds the token) is never written into the document.
 */
export function renderFeed(format: FeedFormat, baseUrl: string, organizationId: string, organizationName: string, entries: FeedEntry[]): string {
  const updated = (e: FeedEntry) => e.resolvedAt ?? e.acknowledgedAt ?? e.startedAt;
  const newest = entries.reduce<Date | null>((m, e) => (!m || updated(e) > m ? updated(e) : m), null);
  const feed = new Feed({
    id: `urn:vigil:incident-feed:${organizationId}`,
    title: xmlSafe(organizationName ? `Incidents — ${organizationName}` : 'Incidents'),
    description: 'Incidents of all workspaces, newest first.',
    link: baseUrl,
    updated: newest ?? new Date(),
    generator: 'Vigil',
    // Atom wants an author on the feed when its entries have none; RSS ignores it.
    author: { name: 'Vigil' },
    copyright: '',
  });
  for (const e of entries) {
    feed.addItem({
      // RSS titles are CDATA plain text (escaping would show "&amp;"); Atom titles are type="html".
      title: format === 'atom' ? html(`${e.monitorName} — ${e.status}`) : xmlSafe(`${e.monitorName} — ${e.status}`).replace(/]]>/g, ']] >'),
      id: format === 'atom' ? `urn:vigil:incident:${e.id}` : e.id,
      guid: e.id,
      link: baseUrl,
      date: updated(e),
      published: e.startedAt,
      description: describe(e),
    });
  }
  // `feed` writes a bare <guid>, which RSS reads as a permalink; incident ids are not URLs.
  return format === 'atom' ? feed.atom1() : feed.rss2().replace(/<guid>/g, '<guid isPermaLink="false">');
}
