import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/connect';
import { workspaceFilter } from './scope';

export interface ChannelFilter {
  organizationId: string;
  /** The caller's confinement: null sees every channel; otherwise organisation-wide channels and these workspaces'. */
  workspaceIds: readonly string[] | null;
  id?: string;
  ids?: readonly string[];
  /** Only the channels linked to this monitor. */
  monitorId?: string;
}

/**
 * Channels with their owner (membership → user), by name. Selects the sealed
 * columns too, so rows never leave the domain as they are: see `channelOut`.
 */
export function selectChannels(db: Db, f: ChannelFilter) {
  let q = db.selectFrom('notification_channels as c')
    .leftJoin('memberships as ms', 'ms.id', 'c.owner_membership_id')
    .leftJoin('users as u', 'u.id', 'ms.user_id')
    .select([
      'c.id', 'c.organization_id', 'c.workspace_id', 'c.kind', 'c.name', 'c.target', 'c.enabled', 'c.confirmed_at', 'c.created_at',
      'c.target_enc', 'c.secret_enc', 'c.config', 'c.confirmation_sent_at',
      'u.id as owner_user_id', 'u.email as owner_email', 'u.name as owner_name',
    ])
    .where('c.organization_id', '=', f.organizationId);
  const ws = workspaceFilter(f.workspaceIds);
  if (ws) {
    q = q.where((eb) => eb.or([eb('c.workspace_id', 'is', null), eb('c.workspace_id', 'in', ws)]));
  }
  if (f.id !== undefined) q = q.where('c.id', '=', f.id);
  if (f.ids !== undefined) q = q.where('c.id', 'in', f.ids.length ? [...f.ids] : ['']);
  if (f.monitorId !== undefined) {
    q = q.where(sql<SqlBool>`exists (select 1 from monitor_channels mc where mc.channel_id = c.id and mc.monitor_id = ${f.monitorId})` as Expression<SqlBool>);
  }
  return q.orderBy('c.name').orderBy('c.id');
}

export type ChannelRow = Awaited<ReturnType<ReturnType<typeof selectChannels>['execute']>>[number];
