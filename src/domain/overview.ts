import { sql } from 'kysely';
import type { Caller } from '../auth/caller';
import { requireWholeOrganisation } from '../auth/confinement';
import type { Db } from '../db/connect';
import { iso, workspaceFilter } from './tenancy';
import { undeliverableKinds as undeliverable, type Providers } from '../alerting/channels/channel';
import { orgWideOrInWorkspaces } from '../repo/scope';

/**
 * Monitor counts by status and unresolved incidents of the caller's view. An
 * incident that is the blast radius of another (rootIncidentId set) or
 * suppressed counts as suppressed, never as open.
 */
export async function summary(db: Db, caller: Caller) {
  const ws = workspaceFilter(caller.workspaceIds);
  let mq = db.selectFrom('monitors')
    .select([sql<string>`case when paused then 'paused' else status end`.as('s'), (eb) => eb.fn.countAll<number>().as('n')])
    .where('organization_id', '=', caller.organizationId);
  if (ws) mq = mq.where('workspace_id', 'in', [...ws]);
  const byStatus = await mq.groupBy(sql`1`).execute();
  let iq = db.selectFrom('incidents')
    .select([
      sql<number>`count(*) filter (where status in ('open', 'acknowledged') and root_incident_id is null)`.as('open'),
      sql<number>`count(*) filter (where status = 'suppressed' or (status in ('open', 'acknowledged') and root_incident_id is not null))`.as('suppressed'),
    ])
    .where('organization_id', '=', caller.organizationId);
  if (ws) iq = iq.where('workspace_id', 'in', [...ws]);
  const inc = await iq.executeTakeFirstOrThrow();
  const count = (s: string) => Number(byStatus.find((r) => r.s === s)?.n ?? 0);
  return {
    total: byStatus.reduce((a, r) => a + Number(r.n), 0),
    up: count('up'), degraded: count('degraded'), down: count('down'), paused: count('paused'), pending: count('pending'),
    openIncidents: Number(inc.open), suppressedIncidents: Number(inc.suppressed),
  };
}

/**
 * The setup checklist, derived on every read. A channel counts as confirmed
 * only when an alert could actually be delivered: enabled, confirmed, and its
 * provider configured (SMTP for e-mail, a bot for Telegram). A key confined
 * to workspaces sees its view only, as everywhere: monitors and status pages
 * of its workspaces, channels of its workspaces or the whole organisation.
 */
export async function setup(db: Db, caller: Caller, providers: Pick<Providers, 'smtpUrl' | 'telegramBotToken' | 'smsAccountSid'>) {
  const org = caller.organizationId;
  const ws = workspaceFilter(caller.workspaceIds);
  const exists = (q: { executeTakeFirst(): Promise<unknown> }) => q.executeTakeFirst().then(Boolean);
  let monitors = db.selectFrom('monitors').select('id').where('organization_id', '=', org);
  if (ws) monitors = monitors.where('workspace_id', 'in', [...ws]);
  let statusPages = db.selectFrom('status_pages').select('id').where('organization_id', '=', org);
  if (ws) statusPages = statusPages.where('workspace_id', 'in', [...ws]);
  const [hasMonitor, hasConfirmedChannel, hasStatusPage, colleagues, row] = await Promise.all([
    exists(monitors.limit(1)),
    exists(db.selectFrom('notification_channels').select('id').where('organization_id', '=', org).where('enabled', '=', true)
      .where('confirmed_at', 'is not', null).where('kind', 'not in', undeliverable(providers))
      .where(orgWideOrInWorkspaces(caller.workspaceIds, sql.ref('workspace_id'))).limit(1)),
    exists(statusPages.limit(1)),
    db.selectFrom('memberships').select((eb) => eb.fn.countAll<number>().as('n')).where('organization_id', '=', org).executeTakeFirstOrThrow(),
    db.selectFrom('organizations').select('setup_dismissed_at').where('id', '=', org).executeTakeFirstOrThrow(),
  ]);
  return { hasMonitor, hasConfirmedChannel, hasStatusPage, hasColleague: Number(colleagues.n) > 1, dismissedAt: iso(row.setup_dismissed_at) };
}

/** Dismisses the checklist for the whole organisation (no audit entry, per the spec). */
export async function dismissSetup(db: Db, caller: Caller) {
  // The checklist is the whole organisation's: a confined caller may not dismiss it for everyone.
  requireWholeOrganisation(caller, 'org:update', 'dismiss the setup checklist for the whole organisation');
  await db.updateTable('organizations').set({ setup_dismissed_at: new Date() })
    .where('id', '=', caller.organizationId).where('setup_dismissed_at', 'is', null).execute();
  return { ok: true as const };
}
