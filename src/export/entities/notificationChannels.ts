/**
 * Notification channels, by creation: name, kind, the masked target the API
 * shows, state and owner. Never the real target, the signing secret, the
 * kind's config or a confirmation token. A key confined to workspaces sees
 * organisation-wide channels and its workspaces' (as GET /channels).
 */
import { sql } from 'kysely';
import { channelKinds, isChannelKind } from '../../alerting/channels';
import { isoOf, within, type ExportEntity, type ExportRow } from '../entity';
import { orgWideOrInWorkspaces } from '../../repo/scope';

/**
 * The shown form of a target. Stored targets are that form already when the
 * real one is sealed beside them; a row from before sealing keeps the real
 * target, so it is masked by its kind here (null when the kind cannot).
 */
function shownTarget(row: ExportRow): string | null {
  if (row.sealed) return row.target as string;
  const kind = String(row.kind);
  if (!isChannelKind(kind)) return null;
  try {
    return channelKinds[kind].parseTarget(String(row.target)).display;
  } catch {
    return null;
  }
}

export const notificationChannels: ExportEntity = {
  columns: ['id', 'name', 'kind', 'workspaceId', 'target', 'enabled', 'confirmed', 'ownerMemberId', 'createdAt'],
  permission: 'notification_channel:read',
  hourly: false,
  time: 'creation (createdAt)',
  query: (db, scope) => {
    const ws = scope.workspaceIds;
    return db.selectFrom('notification_channels as c')
      .select([
        'c.id', 'c.name', 'c.kind', 'c.workspace_id as workspaceId', 'c.target', sql<boolean>`c.target_enc is not null`.as('sealed'),
        'c.enabled', sql<boolean>`c.confirmed_at is not null`.as('confirmed'), 'c.owner_membership_id as ownerMemberId', isoOf('c.created_at').as('createdAt'),
      ])
      .where('c.organization_id', '=', scope.organizationId)
      .where(orgWideOrInWorkspaces(ws, sql`c.workspace_id`))
      .where(within('c.created_at', scope))
      .orderBy('c.created_at').orderBy('c.id');
  },
  map: (row) => ({ ...row, target: shownTarget(row) }),
};
