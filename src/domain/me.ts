import { can, type Caller } from '../auth/caller';
import { PERMISSIONS } from '../auth/roles';
import type { Db } from '../db/connect';
import { iso } from './tenancy';
import { myOrganizations } from '../people/organizations';
import { unauthorized } from '../pipeline/errors';

async function count(db: Db, table: 'monitors' | 'workspaces' | 'memberships' | 'status_pages' | 'api_keys', org: string, activeKeysOnly = false) {
  let q = db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('organization_id', '=', org);
  if (activeKeysOnly) q = q.where('revoked_at' as never, 'is', null);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/**
 * Who the caller is: person, organisation, membership, key, plan entitlements
 * and usage. A caller whose membership (or person, or organisation) went
 * between authentication and these reads — removed on another process a
 * moment ago — is 401, as its next request would be: its keys went with it.
 */
export async function describeMe(db: Db, caller: Caller) {
  const org = caller.organizationId;
  const [user, organization, membership, monitors, workspaces, members, statusPages, apiKeys] = await Promise.all([
    db.selectFrom('users').selectAll().where('id', '=', caller.userId).executeTakeFirst(),
    db.selectFrom('organizations').selectAll().where('id', '=', org).executeTakeFirst(),
    db.selectFrom('memberships').selectAll().where('id', '=', caller.membershipId).executeTakeFirst(),
    count(db, 'monitors', org), count(db, 'workspaces', org), count(db, 'memberships', org),
    count(db, 'status_pages', org), count(db, 'api_keys', org, true),
  ]);
  if (!user || !organization || !membership) throw unauthorized();
  const p = caller.plan;
  return {
    user: { id: user.id, email: user.email, name: user.name, createdAt: iso(user.created_at)! },
    organization: { id: organization.id, name: organization.name, plan: organization.plan, createdAt: iso(organization.created_at)! },
    // What the pipeline would let through (src/auth/caller.ts `can`): a client needs no role table of its own.
    membership: { id: membership.id, role: caller.role, workspaceIds: caller.workspaceIds ? [...caller.workspaceIds] : null, permissions: PERMISSIONS.filter((x) => can(caller, x)) },
    // scopes: the key's own narrowing, [] when it carries all of its role's permissions (ApiKeyInfo.scopes).
    key: caller.key ? { id: caller.key.id, name: caller.key.name, prefix: caller.key.prefix, scopes: [...caller.key.scopes] } : null,
    entitlements: {
      plan: p.code, monitorCap: p.monitor_cap, intervalFloorSeconds: p.interval_floor_seconds, historyRetentionDays: p.history_retention_days,
      smsIncluded: p.sms_included, auditLogIncluded: p.audit_log_included, statusPageCap: p.status_page_cap, memberCap: p.member_cap,
    },
    usage: { monitors, workspaces, members, statusPages, apiKeys },
    // Keys never list other organisations (spec, Authentication §12): the field is for sessions only.
    ...(caller.kind === 'session' ? { organizations: await myOrganizations(db, caller) } : {}),
  };
}
