/**
 * Members of the organisation, by when they joined: who they are, their role
 * and workspace confinement, and when one of their keys was last used (as
 * GET /members, and through a confined caller's view as GET /members shows
 * it). Never a password hash, a session or a key.
 */
import { sql } from 'kysely';
import { reachShownSql, reachVisibleSql } from '../../auth/confinement';
import { isoOf, within, type ExportEntity } from '../entity';

export const members: ExportEntity = {
  columns: ['id', 'userId', 'email', 'name', 'role', 'workspaceIds', 'createdAt', 'lastSeenAt'],
  permission: 'member:read',
  hourly: false,
  time: 'joining (createdAt)',
  query: (db, scope) => db.selectFrom('memberships as ms')
    .innerJoin('users as u', 'u.id', 'ms.user_id')
    .select([
      'ms.id', 'ms.user_id as userId', 'u.email', 'u.name', 'ms.role', reachShownSql(scope, sql`ms.workspace_ids`).as('workspaceIds'), isoOf('ms.created_at').as('createdAt'),
      sql<string | null>`(select to_char(max(k.last_used_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') from api_keys k where k.membership_id = ms.id)`.as('lastSeenAt'),
    ])
    .where('ms.organization_id', '=', scope.organizationId)
    .where(reachVisibleSql(scope, sql`ms.workspace_ids`))
    .where(within('ms.created_at', scope))
    .orderBy('ms.created_at').orderBy('ms.id'),
};
